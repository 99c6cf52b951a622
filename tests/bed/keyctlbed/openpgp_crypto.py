# SPDX-License-Identifier: LGPL-2.1-or-later
"""The private-key side of the bed's OpenPGP card: keys imported the way gpg's
`keytocard` sends them, and the three operations a card does with them.

What it does: parses the extended header list of PUT DATA (odd INS DB, tag 4D,
OpenPGP card 3.4, 4.4.3.12) into a JSON-able private key kept in the card
profile's slot ("private"), and computes PSO:COMPUTE DIGITAL SIGNATURE,
PSO:DECIPHER and INTERNAL AUTHENTICATE (OpenPGP card 3.4, 7.2.10, 7.2.11,
7.2.13) for Ed25519, X25519 (Cv25519) and RSA with PKCS#1 v1.5, with
python3-cryptography.

What it does not do: access conditions, counters, touch (openpgp_use.py and
openpgp_security.py); any other curve or RSA format than e,p,q (format 00).
Errors are returned as ISO 7816 status words, never raised at the caller.
"""

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa, x25519, padding

CRT_SLOT = {0xB6: "sig", 0xB8: "enc", 0xA4: "aut"}


class CardError(Exception):
    """An operation refused with an ISO 7816 status word (.sw)."""

    def __init__(self, sw):
        super().__init__(f"{sw:04X}")
        self.sw = sw


def read_tlv(b, i):
    """(tag, value, next index) of the BER-TLV at b[i:]; raises CardError(6A80) when it
    overruns the buffer: the data came from a terminal, not from us."""
    if i >= len(b):
        raise CardError(0x6A80)
    tag = b[i]
    i += 1
    if tag & 0x1F == 0x1F:
        if i >= len(b):
            raise CardError(0x6A80)
        tag = tag << 8 | b[i]
        i += 1
    n, i = read_len(b, i)
    if n > len(b) - i:
        raise CardError(0x6A80)
    return tag, b[i:i + n], i + n


def read_len(b, i):
    if i >= len(b):
        raise CardError(0x6A80)
    first = b[i]
    if first < 0x80:
        return first, i + 1
    k = first & 0x7F
    if k == 0 or k > 2 or k > len(b) - i - 1:
        raise CardError(0x6A80)
    return int.from_bytes(b[i + 1:i + 1 + k], "big"), i + 1 + k


def parse_import(data):
    """The slot name and {tag: bytes} of a key import template (4D: CRT, 7F48 tag-length
    list, 5F48 concatenated values; OpenPGP card 3.4, 4.4.3.12)."""
    tag, body, _ = read_tlv(bytes(data), 0)
    if tag != 0x4D or len(body) < 2 or body[0] not in CRT_SLOT:
        raise CardError(0x6A80)
    slot = CRT_SLOT[body[0]]
    i = 2  # the CRT: one tag byte and an empty length (B6 00, B8 00, A4 00)
    tag, header, i = read_tlv(body, i)
    if tag != 0x7F48:
        raise CardError(0x6A80)
    tag, values, _ = read_tlv(body, i)
    if tag != 0x5F48:
        raise CardError(0x6A80)
    fields, j, off = {}, 0, 0
    while j < len(header):  # the tag-length list: tags and lengths without values
        t = header[j]
        n, j = read_len(header, j + 1)
        if n > len(values) - off:
            raise CardError(0x6A80)
        fields[t] = values[off:off + n]
        off += n
    return slot, fields


def private_from_import(algorithm, fields):
    """The JSON-able private key of a slot from the imported fields: 92 the scalar (ECC) or
    p (RSA), 91 e, 93 q. gpg sends a Cv25519 scalar big-endian, as libgcrypt keeps it (gnupg
    scd/app-openpgp.c ecc_writekey: 'd' is never "native"), X25519 wants it little-endian."""
    if algorithm.startswith("rsa"):
        e, p, q = (int.from_bytes(fields.get(t, b""), "big") for t in (0x91, 0x92, 0x93))
        if not (e and p and q):
            raise CardError(0x6A80)
        return {"e": e, "p": p, "q": q}
    d = fields.get(0x92, b"")
    if len(d) != 32:
        raise CardError(0x6A80)
    if algorithm == "cv25519":
        d = d[::-1]
    return d.hex()


def _rsa(private):
    e, p, q = private["e"], private["p"], private["q"]
    n, d = p * q, pow(e, -1, (p - 1) * (q - 1))
    nums = rsa.RSAPrivateNumbers(p, q, d, d % (p - 1), d % (q - 1), pow(q, -1, p),
                                 rsa.RSAPublicNumbers(e, n))
    return nums.private_key()


def public_of(algorithm, private):
    """The public key in the profile's "public" form: raw point hex, or {n, e} hex."""
    if algorithm.startswith("rsa"):
        pub = _rsa(private).public_key().public_numbers()
        size = (pub.n.bit_length() + 7) // 8
        return {"n": pub.n.to_bytes(size, "big").hex(), "e": pub.e.to_bytes(3, "big").hex()}
    raw = bytes.fromhex(private)
    if algorithm == "ed25519":
        key = ed25519.Ed25519PrivateKey.from_private_bytes(raw)
    elif algorithm == "cv25519":
        key = x25519.X25519PrivateKey.from_private_bytes(raw)
    else:
        raise CardError(0x6A88)
    return key.public_key().public_bytes(serialization.Encoding.Raw,
                                         serialization.PublicFormat.Raw).hex()


def rsa_pkcs1_sign(private, digest_info):
    """PKCS#1 v1.5 type 1 padding around what the terminal sent (a DigestInfo), then the
    private operation: the card hashes nothing (OpenPGP card 3.4, 7.2.10)."""
    key = _rsa(private)
    nums = key.private_numbers()
    k = (nums.public_numbers.n.bit_length() + 7) // 8
    if len(digest_info) > k * 4 // 10:  # the 40 % of the modulus 7.2.10 allows
        raise CardError(0x6700)
    em = b"\x00\x01" + b"\xff" * (k - 3 - len(digest_info)) + b"\x00" + bytes(digest_info)
    s = pow(int.from_bytes(em, "big"), nums.d, nums.public_numbers.n)
    return s.to_bytes(k, "big")


def sign(algorithm, private, data):
    if algorithm == "ed25519":
        key = ed25519.Ed25519PrivateKey.from_private_bytes(bytes.fromhex(private))
        return key.sign(bytes(data))
    if algorithm.startswith("rsa"):
        return rsa_pkcs1_sign(private, data)
    raise CardError(0x6A88)


def decipher(algorithm, private, data):
    """PSO:DECIPHER: RSA with its padding indicator byte 00 first; ECDH with the template
    A6 { 7F49 { 86 point } } (OpenPGP card 3.4, 7.2.11), the shared secret back."""
    data = bytes(data)
    if algorithm.startswith("rsa"):
        if not data or data[0] != 0x00:
            raise CardError(0x6A80)
        try:
            return _rsa(private).decrypt(data[1:], padding.PKCS1v15())
        except ValueError:
            raise CardError(0x6A80)
    if algorithm != "cv25519":
        raise CardError(0x6A88)
    tag, a6, _ = read_tlv(data, 0)
    tag2, pk, _ = read_tlv(a6, 0) if tag == 0xA6 else (0, b"", 0)
    tag3, point, _ = read_tlv(pk, 0) if tag2 == 0x7F49 else (0, b"", 0)
    if tag3 != 0x86:
        raise CardError(0x6A80)
    if len(point) == 33 and point[0] == 0x40:  # OpenPGP's native-point prefix
        point = point[1:]
    if len(point) != 32:
        raise CardError(0x6A80)
    key = x25519.X25519PrivateKey.from_private_bytes(bytes.fromhex(private))
    return key.exchange(x25519.X25519PublicKey.from_public_bytes(point))
