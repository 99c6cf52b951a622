#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The bed's card in use, through a real pcscd: PIN retry counters (63Cx, blocked 6983, back
after the right PIN), keys imported with PUT DATA odd in command chaining, PSO:CDS whose
Ed25519 and RSA signatures verify (python3-cryptography), "PW1 valid for one signature",
the signature counter, PSO:DECIPHER (X25519 with gpg's A6 template; RSA with its 00 byte),
INTERNAL AUTHENTICATE, a touch that holds the answer (and its timeout, and "cached"), and
the APDUs counted per test phase. Every check names what a terminal would see."""

import threading

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, padding, rsa, x25519
from cryptography.hazmat.primitives.asymmetric.utils import Prehashed

from common import run
import keyctlbed as kb
from keyctlbed import openpgp_apdu as A, profiles
from keyctlbed.openpgp_card import tlv

SEL = A.SELECT_OPENPGP
PW1, PW3 = "123456", "12345678"
SHA256_PREFIX = bytes.fromhex("3031300d060960864801650304020105000420")
RAW = (serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
       serialization.NoEncryption())


def card_profile():
    prof = profiles.load("nitrokey3")
    prof.update(applet="nitrokey3", slots={}, signature_counter=0, pw1_valid_once=True)
    return prof


def ok(results, what):
    bad = [(i, r) for i, r in enumerate(results) if r[1] != 0x9000]
    assert not bad, (what, bad)
    return results


def check_retries(p, card):
    out = [sw for _, sw in p.transmit([SEL, A.verify(0x81, "654321"), A.GET_PW_STATUS,
                                       A.verify(0x81), A.verify(0x82, PW1), A.GET_PW_STATUS])]
    assert out[1] == 0x63C2 and out[3] == 0x63C2 and out[4] == 0x9000, out
    res = p.transmit([SEL, A.verify(0x81, "654321"), A.GET_PW_STATUS, A.verify(0x82, PW1),
                      A.GET_PW_STATUS])
    assert res[2][0][8:10] == "02" and res[4][0][8:10] == "03", res
    res = p.transmit([SEL] + [A.verify(0x83, "00000000")] * 3 + [A.verify(0x83, PW3),
                                                                  A.verify(0x83)])
    assert [sw for _, sw in res[1:]] == [0x63C2, 0x63C1, 0x63C0, 0x6983, 0x6983], res
    assert card.live_profile()["pin_retries"]["pw3"] == 0
    card.update(pin_retries={"pw1": 3, "rc": 0, "pw3": 3})
    assert p.transmit([SEL, A.verify(0x83, PW3)])[1][1] == 0x9000
    print("VERIFY: 63C2 on a wrong PIN, C4 shows it, back to 3 after the right one; "
          "PW3 blocked after three (6983), even for the right PIN")


def import_keys(p, card):
    """Ed25519 sign, X25519 decrypt, RSA 2048 auth: the attributes set with PUT DATA C1-C3,
    the keys imported in chained PUT DATA odd after VERIFY PW3. Returns the private keys."""
    sig, enc = ed25519.Ed25519PrivateKey.generate(), x25519.X25519PrivateKey.generate()
    aut = rsa.generate_private_key(65537, 2048)
    n = aut.private_numbers()
    refused = p.transmit([SEL] + A.import_key("sig", [(0x92, sig.private_bytes(*RAW))]))
    assert refused[-1][1] == 0x6982, refused  # no PW3 yet
    apdus = [SEL, A.verify(0x83, PW3),
             A.put_data(0xC1, bytes.fromhex("162B06010401DA470F01")),
             A.put_data(0xC2, bytes.fromhex("122B060104019755010501")),
             A.put_data(0xC3, bytes.fromhex("010800002000"))]
    apdus += A.import_key("sig", [(0x92, sig.private_bytes(*RAW))])
    apdus += A.import_key("enc", [(0x92, enc.private_bytes(*RAW)[::-1])])  # gpg: big-endian
    rsa_fields = [(0x91, b"\x01\x00\x01"), (0x92, n.p.to_bytes(128, "big")),
                  (0x93, n.q.to_bytes(128, "big"))]
    chained = A.import_key("aut", rsa_fields)
    assert len(chained) == 2 and chained[0].startswith("10DB3FFF"), chained
    ok(p.transmit(apdus + chained), "import")
    res = ok(p.transmit([SEL, "0047810002B60000", "0047810002B80000"]), "read public keys")
    raw = lambda k: k.public_key().public_bytes(serialization.Encoding.Raw,  # noqa: E731
                                                serialization.PublicFormat.Raw).hex()
    assert raw(sig) in res[1][0] and raw(enc) in res[2][0], res
    print("keys imported: PUT DATA odd in command chaining (CLA 10) after VERIFY PW3; "
          "without it 6982; 47 81 reads the public keys back")
    return sig, enc, aut


def check_signatures(p, card, sig, aut):
    res = p.transmit([SEL, A.verify(0x81, PW1), A.sign(b"first"), A.sign(b"second"),
                      A.verify(0x81), A.GET_SIG_COUNTER])
    assert [sw for _, sw in res[1:]] == [0x9000, 0x9000, 0x6982, 0x63C3, 0x9000], res
    sig.public_key().verify(bytes.fromhex(res[2][0]), b"first")
    assert res[5][0] == "9303000001", res
    card.update(pw1_valid_once=False)
    digest = b"\x42" * 32
    res = ok(p.transmit([SEL, A.verify(0x81, PW1), A.sign(b"a"), A.sign(b"b"),
                         A.verify(0x82, PW1), A.internal_auth(SHA256_PREFIX + digest),
                         A.GET_SIG_COUNTER]), "several signatures")
    assert res[6][0] == "9303000003", res  # INTERNAL AUTHENTICATE does not count
    aut.public_key().verify(bytes.fromhex(res[5][0]), digest, padding.PKCS1v15(),
                            Prehashed(hashes.SHA256()))
    print("PSO:CDS: Ed25519 signature verifies; PW1 valid once: the second needs a VERIFY "
          "(6982, status 63C3); valid many: two with one; 93 counts 3; INTERNAL AUTHENTICATE "
          "RSA PKCS#1 over the DigestInfo verifies and is not counted")


def check_decipher(p, card, enc, aut):
    eph = x25519.X25519PrivateKey.generate()
    point = eph.public_key().public_bytes(serialization.Encoding.Raw,
                                          serialization.PublicFormat.Raw)
    template = tlv(0xA6, tlv(0x7F49, tlv(0x86, b"\x40" + point)))
    res = p.transmit([SEL, A.decipher(template), A.verify(0x82, PW1), A.decipher(template)])
    assert res[1][1] == 0x6982 and res[3][1] == 0x9000, res
    assert bytes.fromhex(res[3][0]) == eph.exchange(enc.public_key()), res
    # RSA: move the RSA key to the decryption slot as well, then a chained PSO:DECIPHER.
    n = aut.private_numbers()
    apdus = [SEL, A.verify(0x83, PW3), A.put_data(0xC2, bytes.fromhex("010800002000"))]
    apdus += A.import_key("enc", [(0x91, b"\x01\x00\x01"), (0x92, n.p.to_bytes(128, "big")),
                                  (0x93, n.q.to_bytes(128, "big"))])
    cipher = aut.public_key().encrypt(b"session key", padding.PKCS1v15())
    dec = A.chained(0x2A, 0x80, 0x86, b"\x00" + cipher)
    res = ok(p.transmit(apdus + [A.verify(0x82, PW1)] + dec), "RSA decipher")
    assert bytes.fromhex(res[-1][0]) == b"session key", res[-1]
    print("PSO:DECIPHER: X25519 from gpg's A6/7F49/86 template (needs PW1 82); RSA 2048 with "
          "the 00 padding byte, chained")


def transmit_bg(p, apdus):
    out = []
    t = threading.Thread(target=lambda: out.extend(p.transmit(apdus, timeout=60)))
    t.start()
    return t, out


def check_touch(p, card):
    card.update_slot("sig", touch="on")
    t, out = transmit_bg(p, [SEL, A.verify(0x81, PW1), A.sign(b"touch me")])
    assert card.touch(), "no operation waited for a touch"
    t.join(30)
    assert out and out[2][1] == 0x9000, out
    card.update(touch_timeout_s=1)
    res = p.transmit([SEL, A.verify(0x81, PW1), A.sign(b"nobody touches")])
    assert res[2][1] == 0x6985, res
    card.update(touch_timeout_s=15)
    card.update_slot("sig", touch="off")
    card.update_slot("aut", touch="cached")
    auth = A.internal_auth(SHA256_PREFIX + b"\x01" * 32)
    t, out = transmit_bg(p, [SEL, A.verify(0x82, PW1), auth, auth])
    assert card.touch(), "the first cached authentication did not wait"
    t.join(30)
    assert [sw for _, sw in out] == [0x9000] * 4, out
    assert not card.security()["touch_pending"]
    card.update_slot("aut", touch="off")
    print("touch on: PSO:CDS held until card.touch(); no touch within the timeout: 6985; "
          "cached: one touch, the next authentication answers at once")


def check_phases(p, card):
    card.reset_counters()
    card.phase("read")
    p.transmit([SEL, "00CA006E000000"])
    card.phase("use")
    p.transmit([SEL, A.verify(0x81, PW1), A.sign(b"x")])
    counts = card.phase_counts()
    assert counts["read"] == {"SELECT": 1, "GET DATA": 1}, counts
    assert counts["use"] == {"SELECT": 1, "VERIFY": 1, "PSO:CDS": 1}, counts
    assert card.forbidden_count() == 2, card.forbidden()  # still recorded: a reader's sin
    print(f"phases: {counts}")


def main():
    with kb.Pcscd() as p:
        card = p.card(card_profile())
        p.wait_card(True)
        check_retries(p, card)
        sig, enc, aut = import_keys(p, card)
        check_signatures(p, card, sig, aut)
        check_decipher(p, card, enc, aut)
        check_touch(p, card)
        check_phases(p, card)


run(main)
