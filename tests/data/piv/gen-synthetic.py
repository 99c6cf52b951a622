#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Writes tests/data/piv/synthetic/*.piv: made-up PIV answers for what no public recording shows
(a compressed certificate, a year-0000 date, garbage, a bomb), in FORMAT.md's format. Fixed dates
and EC keys; the RSA key is new each run, so run it again only to change the files.
`gen-synthetic.py chained` writes only chained.piv, from edge-cases.piv."""
import datetime
import gzip
import os
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "synthetic")
UTC = datetime.timezone.utc


def tlv(tag, val):
    n = len(val)
    if n < 0x80:
        ln = bytes([n])
    elif n < 0x100:
        ln = bytes([0x81, n])
    else:
        ln = bytes([0x82, n >> 8, n & 0xFF])
    return bytes([tag]) + ln + val


def cert_object(der, compressed=False):
    body = gzip.compress(der, mtime=0) if compressed else der
    return tlv(0x53, tlv(0x70, body) + tlv(0x71, bytes([1 if compressed else 0])) + tlv(0xFE, b""))


def name(cn):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def make_cert(subject, issuer, key, signer, nb, na, serial):
    b = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
         .public_key(key.public_key()).serial_number(serial)
         .not_valid_before(nb).not_valid_after(na))
    return b.sign(signer, hashes.SHA256()).public_bytes(serialization.Encoding.DER)


def hexs(b):
    return " ".join("%02X" % x for x in b)


def get_data(obj):
    return "> 00 CB 3F FF 05 5C 03 5F C1 %02X 00" % obj


def chained(edge_lines):
    """chained.piv: edge-cases.piv's 9A certificate as a card hands it out in 61xx pieces, each
    recorded as its own pair (as traces show them), padded with 00 after the DER inside 70; and
    a CHUID asked with extended lengths."""
    i = edge_lines.index(get_data(0x05))
    obj = bytes.fromhex(edge_lines[i + 1][2:].replace(" ", ""))[:-2]
    der_len = int.from_bytes(obj[6:8], "big")
    der = obj[8:8 + der_len]
    padded = tlv(0x53, tlv(0x70, der + bytes(8)) + tlv(0x71, b"\0") + tlv(0xFE, b""))
    lines = [
        "# Made up by gen-synthetic.py from edge-cases.piv's 9A: an answer recorded in pieces.",
        "@ synthetic the 61xx / GET RESPONSE pieces recorded one by one, and 00 padding after "
        "the certificate inside 70",
        "@ device made up", "@ family other",
        "> 00 A4 04 00 09 A0 00 00 03 08 00 00 10 00 00",
        "< 61 11 4F 06 00 00 10 00 01 00 79 07 4F 05 A0 00 00 03 08 90 00",
    ]
    # The CHUID asked with extended lengths, as some traces record it (Lc 00 00 05, Le 00 00).
    chuid = tlv(0x53, tlv(0x34, bytes(16)) + tlv(0x35, b"20270630") + tlv(0xFE, b""))
    lines += ["> 00 CB 3F FF 00 00 05 5C 03 5F C1 02 00 00", "< " + hexs(chuid) + " 90 00"]
    rest, cmd = padded, get_data(0x05)
    while rest:
        piece, rest = rest[:256], rest[256:]
        sw = "61 %02X" % min(len(rest), 255) if rest else "90 00"
        lines += [cmd, "< " + hexs(piece) + " " + sw]
        cmd = "> 00 C0 00 00 00"
    lines += ["= state read", "# 2027-06-30T00:00:00Z", "= chuid_expiry 1814313600", "= slots 9a", "= 9a.subject CN=SSH key", "= 9a.self_signed yes",
              "# 2026-12-01T10:00:00Z", "= 9a.not_after 1796119200", "= 9a.algorithm nistp256"]
    return lines


def main():
    if sys.argv[1:] == ["chained"]:
        with open(os.path.join(OUT, "edge-cases.piv")) as f:
            edge = f.read().split("\n")
        with open(os.path.join(OUT, "chained.piv"), "w") as f:
            f.write("\n".join(chained(edge)) + "\n")
        return 0
    # EC keys derived from fixed numbers, never used for anything but these files.
    p256 = ec.derive_private_key(0x5EED1, ec.SECP256R1())
    ca_key = ec.derive_private_key(0x5EED2, ec.SECP384R1())
    rsa_key = rsa.generate_private_key(65537, 2048)
    d = datetime.datetime
    selfsigned = make_cert(name("SSH key"), name("SSH key"), p256, p256,
                           d(2025, 12, 1, 10, 0, 0, tzinfo=UTC), d(2026, 12, 1, 10, 0, 0, tzinfo=UTC), 1)
    ca_issued = make_cert(name("Jane Doe"), x509.Name([
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Example Corp"),
        x509.NameAttribute(NameOID.COMMON_NAME, "Example Issuing CA")]), rsa_key, ca_key,
        d(2026, 1, 15, 0, 0, 0, tzinfo=UTC), d(2027, 1, 15, 0, 0, 0, tzinfo=UTC), 2)
    # Year 9999 is a GeneralizedTime; 0000 takes its place byte for byte (the signature no
    # longer matches, as it would not on the card that was found with such a date either).
    y9999 = make_cert(name("zero year"), name("zero year"), p256, p256,
                      d(2025, 1, 1, tzinfo=UTC), d(9999, 12, 31, 23, 59, 59, tzinfo=UTC), 3)
    assert y9999.count(b"99991231235959Z") == 1
    y0000 = y9999.replace(b"99991231235959Z", b"00000101000000Z")
    garbage = bytes((i * 37 + 11) & 0xFF for i in range(3072))
    bomb = gzip.compress(b"\0" * (80 * 1024), mtime=0)
    chuid = tlv(0x53, tlv(0x30, bytes(25)) + tlv(0x34, bytes(16)) + tlv(0x35, b"20300101") +
                tlv(0x3E, b"") + tlv(0xFE, b""))
    past = bytes([0x53, 0x82, 0x02, 0x00, 0x70, 0x10]) + bytes(16)
    lines = [
        "# Made up by gen-synthetic.py: one slot of each kind no public recording shows.",
        "@ synthetic a compressed CA-issued certificate, a self-signed placeholder, a year-0000 "
        "not_after, 3 KiB of garbage, a gzip bomb, a 53 whose length runs past the answer",
        "@ device made up", "@ family other",
        "> 00 A4 04 00 05 A0 00 00 03 08 00",
        "< 61 11 4F 06 00 00 10 00 01 00 79 07 4F 05 A0 00 00 03 08 90 00",
        get_data(0x02), "< " + hexs(chuid) + " 90 00",
        get_data(0x05), "< " + hexs(cert_object(selfsigned)) + " 90 00",
        get_data(0x0A), "< " + hexs(cert_object(ca_issued, True)) + " 90 00",
        get_data(0x0B), "< " + hexs(tlv(0x53, tlv(0x70, garbage) + tlv(0x71, b"\0"))) + " 90 00",
        get_data(0x01), "< " + hexs(cert_object(y0000)) + " 90 00",
        get_data(0x0D), "< " + hexs(tlv(0x53, tlv(0x70, bomb) + tlv(0x71, b"\x01"))) + " 90 00",
        get_data(0x0E), "< " + hexs(past) + " 90 00",
        "> 00 A4 04 00 06 D2 76 00 01 24 01 00", "< 90 00",
        "= state read",
        "# 2030-01-01T00:00:00Z",
        "= chuid_expiry 1893456000",
        "= slots 9a 9c 9d 9e 82 83",
        "= 9a.subject CN=SSH key", "= 9a.issuer CN=SSH key",
        "# 2025-12-01T10:00:00Z and 2026-12-01T10:00:00Z",
        "= 9a.not_before 1764583200", "= 9a.not_after 1796119200",
        "= 9a.self_signed yes", "= 9a.algorithm nistp256",
        "= 9c.subject CN=Jane Doe", "= 9c.issuer CN=Example Issuing CA,O=Example Corp",
        "# 2026-01-15T00:00:00Z and 2027-01-15T00:00:00Z",
        "= 9c.not_before 1768435200", "= 9c.not_after 1799971200",
        "= 9c.self_signed no", "= 9c.algorithm rsa2048",
        "= 9d.error not a certificate",
        "= 9e.error certificate's not_after is not a valid date",
        "= 82.error compressed certificate inflates past 64 KiB",
        "= 83.error certificate object malformed",
    ]
    with open(os.path.join(OUT, "edge-cases.piv"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
