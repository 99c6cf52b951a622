# SPDX-License-Identifier: LGPL-2.1-or-later
"""Command APDUs (hex) a terminal sends to a card in use, built as gpg builds
them, for the bed's own tests of the card: VERIFY, PSO, INTERNAL AUTHENTICATE,
PUT DATA, and a key import split with command chaining (CLA 10).

What it does not do: send anything (pcscd.transmit(), openpgp_pcsc.session()).
"""

from .openpgp_card import ber_len, tlv

SELECT_OPENPGP = "00A4040006D27600012401"
CRT = {"sig": b"\xb6\x00", "enc": b"\xb8\x00", "aut": b"\xa4\x00"}
GET_PW_STATUS = "00CA00C400"
GET_SIG_COUNTER = "00CA007A00"


def apdu(cla, ins, p1, p2, data=b"", le=None):
    """A short APDU; data up to 255 bytes."""
    out = bytes([cla, ins, p1, p2])
    if data:
        out += bytes([len(data)]) + bytes(data)
    if le is not None:
        out += bytes([le & 0xFF])
    return out.hex().upper()


def verify(ref, pin=None):
    """VERIFY of PW1 81/82 or PW3 83; pin None asks the status (no data)."""
    return apdu(0x00, 0x20, 0x00, ref, pin.encode() if pin else b"")


def sign(data):
    return apdu(0x00, 0x2A, 0x9E, 0x9A, data, le=0)


def decipher(data):
    return apdu(0x00, 0x2A, 0x80, 0x86, data, le=0)


def internal_auth(data):
    return apdu(0x00, 0x88, 0x00, 0x00, data, le=0)


def put_data(tag, value):
    return apdu(0x00, 0xDA, tag >> 8, tag & 0xFF, value)


def chained(ins, p1, p2, data, size=254):
    """The APDUs of one command sent in parts: CLA 10 on all but the last (ISO 7816-4 5.1.1)."""
    parts = [data[i:i + size] for i in range(0, len(data), size)] or [b""]
    return [apdu(0x10 if i < len(parts) - 1 else 0x00, ins, p1, p2, part)
            for i, part in enumerate(parts)]


def import_template(slot, fields):
    """PUT DATA odd's data: 4D { CRT, 7F48 tag-length list, 5F48 values } (OpenPGP card 3.4,
    4.4.3.12); fields is [(tag, bytes)] in order (ECC: 92 scalar; RSA: 91 e, 92 p, 93 q)."""
    header = b"".join(bytes([t]) + ber_len(len(v)) for t, v in fields)
    body = CRT[slot] + tlv(0x7F48, header) + tlv(0x5F48, b"".join(v for _, v in fields))
    return tlv(0x4D, body)


def import_key(slot, fields):
    return chained(0xDB, 0x3F, 0xFF, import_template(slot, fields))
