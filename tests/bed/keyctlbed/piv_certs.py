# SPDX-License-Identifier: LGPL-2.1-or-later
"""The X.509 certificates and the CHUID of the bed's PIV application, made from a
profile's "piv" spec with python3-cryptography (see README.md, "The PIV application").

What it does: materialize(profile) gives every slot of profile["piv"]["slots"] that has no
"der" yet a certificate: issued by the bed's test CA ("issuer" set) or self-signed like
ykman's `piv certificates generate` (issuer = subject, random serial, no extensions), its
dates from "not_before"/"not_after" (epoch seconds) or "not_before_days"/"not_after_days"
(days from now), the slot's key deterministic (derived from the slot and subject; RSA keys
are made once and cached under /tmp/keyctlbed-cache). It writes "der" (the certificate,
hex), "public" (the key as GET METADATA's tag 04 wants it, hex) and the decoded fields a
test compares with ("subject", "issuer", "not_before", "not_after", "self_signed"). The
CHUID is built like ykman's generate_chuid() (ykman/piv.py): FASC-N 9999-9999-999999,
a GUID, the expiration date (tag 35, YYYYMMDD; ykman writes 20300101), 3E, FE.

What it does not do: APDUs (piv_card.py); certificates it did not make are taken as given
("der" in the profile, e.g. a real YubiKey's).
"""

import datetime
import gzip
import hashlib
import os

FASC_N = bytes.fromhex("d4e739da739ced39ce739d836858210842108421c84210c3eb")  # ykman 4.0.9
CACHE = "/tmp/keyctlbed-cache"
CA_SUBJECT = "CN=keyctl bed issuing CA,O=Example Corp"
DAY = 86400


def _name(text):
    from cryptography import x509
    from cryptography.x509.oid import NameOID
    oids = {"CN": NameOID.COMMON_NAME, "O": NameOID.ORGANIZATION_NAME,
            "OU": NameOID.ORGANIZATIONAL_UNIT_NAME, "C": NameOID.COUNTRY_NAME}
    parts = [p.split("=", 1) for p in text.split(",")]
    # RFC 4514 text lists the most specific RDN first; the Name's order is the reverse.
    return x509.Name([x509.NameAttribute(oids[k.strip()], v) for k, v in reversed(parts)])


def _rsa_key(bits):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    path = os.path.join(CACHE, f"piv-rsa{bits}.pem")
    try:
        with open(path, "rb") as f:
            return serialization.load_pem_private_key(f.read(), None)
    except FileNotFoundError:
        pass
    key = rsa.generate_private_key(65537, bits)
    os.makedirs(CACHE, exist_ok=True)
    tmp = f"{path}.{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    os.replace(tmp, path)  # two tests making it at once: either file is a valid key
    return key


def private_key(algorithm, seed):
    """A deterministic key for ECC (the seed's hash as the scalar), a cached one for RSA."""
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519
    h = int.from_bytes(hashlib.sha256(seed.encode()).digest(), "big")
    if algorithm == "nistp256":
        return ec.derive_private_key(h % (2**255) + 1, ec.SECP256R1())
    if algorithm == "nistp384":
        return ec.derive_private_key(h + 1, ec.SECP384R1())
    if algorithm == "ed25519":
        return ed25519.Ed25519PrivateKey.from_private_bytes(h.to_bytes(32, "big"))
    if algorithm.startswith("rsa"):
        return _rsa_key(int(algorithm[3:]))
    raise ValueError(f"PIV slot algorithm {algorithm!r}")


def public_for_metadata(key):
    """GET METADATA's tag 04 value: 81 modulus 82 exponent (RSA) or 86 point (ECC), as
    yubikit/piv.py _parse_device_public_key() reads it."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from .openpgp_card import tlv
    pub = key.public_key()
    if isinstance(pub, rsa.RSAPublicKey):
        n = pub.public_numbers()
        return (tlv(0x81, n.n.to_bytes((n.n.bit_length() + 7) // 8, "big"))
                + tlv(0x82, n.e.to_bytes(3, "big")))
    try:
        point = pub.public_bytes(serialization.Encoding.X962,
                                 serialization.PublicFormat.UncompressedPoint)
    except ValueError:  # Ed25519: the raw 32 bytes
        point = pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return tlv(0x86, point)


def _when(spec, name, default_days, now):
    if name in spec:
        return int(spec[name])
    return now + int(spec.get(name + "_days", default_days)) * DAY


def make_certificate(slot, spec, now):
    """(DER, private key) of one slot's certificate."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ed25519
    algorithm = spec.get("algorithm", "nistp256")
    subject = spec.get("subject", f"CN=PIV slot {slot}")
    key = private_key(algorithm, f"{slot}/{subject}")
    issuer = spec.get("issuer")
    signer = private_key("nistp256", "ca/" + issuer) if issuer else key
    utc = datetime.timezone.utc
    nb = datetime.datetime.fromtimestamp(_when(spec, "not_before", -30, now), utc)
    na = datetime.datetime.fromtimestamp(_when(spec, "not_after", 335, now), utc)
    b = (x509.CertificateBuilder().subject_name(_name(subject))
         .issuer_name(_name(issuer or subject)).public_key(key.public_key())
         .serial_number(int(hashlib.sha256(f"{slot}/{subject}".encode()).hexdigest()[:16], 16))
         .not_valid_before(nb.replace(tzinfo=None)).not_valid_after(na.replace(tzinfo=None)))
    if issuer:
        b = b.add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
    digest = None if isinstance(signer, ed25519.Ed25519PrivateKey) else hashes.SHA256()
    from cryptography.hazmat.primitives import serialization
    return b.sign(signer, digest).public_bytes(serialization.Encoding.DER), key


def materialize(profile, now=None):
    """Fills in every PIV slot's certificate and key (see the module's comment). Idempotent:
    a slot with "der" is left alone, so a reinserted card keeps its certificates."""
    piv = profile.get("piv")
    if not piv:
        return profile
    import time
    now = int(time.time()) if now is None else now
    for slot, spec in piv.get("slots", {}).items():
        if "der" in spec or spec.get("empty"):
            continue
        der, key = make_certificate(slot, spec, now)
        spec["der"] = der.hex()
        spec["public"] = public_for_metadata(key).hex()
        describe(spec, der)
    return profile


def _utc(c, name):
    """cryptography >= 42 (Debian 13) warns about the naive properties; 38 has only those."""
    if hasattr(c, name + "_utc"):
        return getattr(c, name + "_utc")
    return getattr(c, name).replace(tzinfo=datetime.timezone.utc)


def describe(spec, der):
    """What a reader should decode from the certificate: the fields keyctld's Token.piv has."""
    from cryptography import x509
    c = x509.load_der_x509_certificate(der)
    spec["subject"] = c.subject.rfc4514_string()
    spec["issuer_dn"] = c.issuer.rfc4514_string()
    spec["not_before"] = int(_utc(c, "not_valid_before").timestamp())
    spec["not_after"] = int(_utc(c, "not_valid_after").timestamp())
    spec["self_signed"] = c.issuer == c.subject


def certificate_object(spec):
    """The certificate's data object (SP 800-73-4 3.3.2): 70 certificate, 71 CertInfo
    (01: gzip-compressed, as YubiKey tools write long certificates), FE LRC."""
    from .openpgp_card import tlv
    der = bytes.fromhex(spec["der"])
    if spec.get("compressed"):
        return tlv(0x70, gzip.compress(der, mtime=0)) + tlv(0x71, b"\x01") + tlv(0xFE, b"")
    return tlv(0x70, der) + tlv(0x71, b"\x00") + tlv(0xFE, b"")


def chuid(piv):
    """The CHUID object's value, or None when the profile has none ("chuid": null)."""
    from .openpgp_card import tlv
    expiry = piv.get("chuid_expiry", "20300101")
    if expiry is None:
        return None
    guid = hashlib.sha256(b"guid" + str(expiry).encode()).digest()[:16]
    return (tlv(0x30, FASC_N) + tlv(0x34, guid) + tlv(0x35, str(expiry).encode())
            + tlv(0x3E, b"") + tlv(0xFE, b""))
