"""Webhook certificates: a CA and a serving certificate it signs, kept together as in
open-policy-agent's cert-controller (which training-operator v1.8+ uses). Pure (no I/O; key
generation is the only randomness).

* :class:`Bundle`: ``ca.crt`` (PEM; the current CA first, then the previous one while it is
  still valid, so clients that trust either keep working across a CA rotation), ``ca.key``,
  ``tls.crt``, ``tls.key``: the keys of the Secret every replica shares
  (:meth:`Bundle.secret_data`, :meth:`Bundle.from_secret_data`).
* :func:`issue` makes a new bundle: a new CA (ECDSA P-256, ``CN=<ca_name>``,
  ``O=<organization>``) or the given one, and a serving certificate for an :class:`Identity`
  (DNS names and IP addresses). Both are backdated one hour against clock skew, as
  cert-controller does.
* :func:`assess` says what a bundle needs at ``now``: nothing until ``renew_at``, a new
  serving certificate (expiring, names missing, not signed by the CA or not matching its key),
  or everything (no bundle, unreadable, the CA expiring or issued for longer than the
  configured validity). "Expiring" means within
  :func:`lookahead` of the end: 90 days (cert-controller's), or a quarter of the validity for
  shorter ones.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = [
    "Assessment",
    "Bundle",
    "CertificateError",
    "Identity",
    "assess",
    "issue",
    "lookahead",
]

CA_CERT, CA_KEY, TLS_CERT, TLS_KEY = "ca.crt", "ca.key", "tls.crt", "tls.key"
SECRET_KEYS = (CA_CERT, CA_KEY, TLS_CERT, TLS_KEY)
BACKDATE = dt.timedelta(hours=1)
MAX_LOOKAHEAD = dt.timedelta(days=90)


class CertificateError(ValueError):
    """A bundle that cannot be read; the message names the key and the problem."""


@dataclass(frozen=True)
class Identity:
    """What the serving certificate must name: the Service's DNS name(s), and the IP
    addresses of a ``--webhook-url`` that points at an address."""

    dns_names: tuple[str, ...] = ()
    ip_addresses: tuple[str, ...] = ()


@dataclass(frozen=True)
class Bundle:
    ca_cert: bytes
    ca_key: bytes
    cert: bytes
    key: bytes

    def secret_data(self) -> dict[str, str]:
        """The Secret's ``data`` (base64 of each PEM)."""
        values = (self.ca_cert, self.ca_key, self.cert, self.key)
        return {k: base64.b64encode(v).decode() for k, v in zip(SECRET_KEYS, values, strict=True)}

    @classmethod
    def from_secret_data(cls, data: object) -> Bundle:
        """The bundle in a Secret's ``data``; :class:`CertificateError` if a key is missing or
        not base64."""
        if not isinstance(data, Mapping):
            raise CertificateError("the Secret has no data")
        values = []
        for key in SECRET_KEYS:
            raw = data.get(key)
            if not isinstance(raw, str) or not raw:
                raise CertificateError(f"the Secret has no {key}")
            try:
                values.append(base64.b64decode(raw, validate=True))
            except (binascii.Error, ValueError):
                raise CertificateError(f"{key} is not base64") from None
        return cls(*values)


@dataclass(frozen=True)
class Assessment:
    action: Literal["keep", "renew-serving", "renew-all"]
    reason: str
    renew_at: dt.datetime | None = None
    """When ``keep``: the moment the bundle will need renewing."""


def lookahead(validity: dt.timedelta) -> dt.timedelta:
    """How long before the end a certificate of ``validity`` is renewed."""
    return min(MAX_LOOKAHEAD, validity / 4)


def _new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _builder(subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey,
             now: dt.datetime, validity: dt.timedelta) -> x509.CertificateBuilder:
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
            .public_key(public_key).serial_number(x509.random_serial_number())
            .not_valid_before(now - BACKDATE).not_valid_after(now + validity))


def _new_ca(name: str, organization: str, now: dt.datetime, validity: dt.timedelta,
            ) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = _new_key()
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name),
                         x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization)])
    cert = (_builder(subject, subject, key.public_key(), now, validity)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False,
                                         encipher_only=False, decipher_only=False),
                           critical=True)
            .sign(key, hashes.SHA256()))
    return cert, key


def _san(identity: Identity) -> x509.SubjectAlternativeName:
    names: list[x509.GeneralName] = [x509.DNSName(n) for n in identity.dns_names]
    names += [x509.IPAddress(ipaddress.ip_address(a)) for a in identity.ip_addresses]
    return x509.SubjectAlternativeName(names)


def _serving(identity: Identity, ca: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey,
             now: dt.datetime, validity: dt.timedelta) -> tuple[bytes, bytes]:
    key = _new_key()
    common = (identity.dns_names or identity.ip_addresses or ("webhook",))[0]
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])
    # The serving certificate never outlives its CA.
    end = min(now + validity, ca.not_valid_after_utc)
    cert = (_builder(subject, ca.subject, key.public_key(), now, end - now)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .add_extension(_san(identity), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return _pem(cert), _key_pem(key)


def _load_certs(pem: bytes, what: str) -> list[x509.Certificate]:
    try:
        certs = x509.load_pem_x509_certificates(pem)
    except ValueError as err:
        raise CertificateError(f"{what} is not a PEM certificate: {err}") from None
    return certs


def _load_key(pem: bytes, what: str) -> ec.EllipticCurvePrivateKey:
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as err:
        raise CertificateError(f"{what} is not a PEM private key: {err}") from None
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise CertificateError(f"{what} is not an ECDSA key")
    return key


def _public_bytes(key: ec.EllipticCurvePublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.DER,
                            serialization.PublicFormat.SubjectPublicKeyInfo)


def issue(identity: Identity, *, now: dt.datetime, validity: dt.timedelta,
          ca_name: str, organization: str, reuse_ca: Bundle | None = None,
          previous: Bundle | None = None) -> Bundle:
    """A bundle for ``identity``: signed by ``reuse_ca``'s CA (its ``ca.crt`` kept as is), or
    by a new CA, in which case ``ca.crt`` also lists ``previous``'s CA while it is valid."""
    if reuse_ca is not None:
        ca = _load_certs(reuse_ca.ca_cert, CA_CERT)[0]
        ca_key = _load_key(reuse_ca.ca_key, CA_KEY)
        cert, key = _serving(identity, ca, ca_key, now, validity)
        return Bundle(reuse_ca.ca_cert, reuse_ca.ca_key, cert, key)
    ca, ca_key = _new_ca(ca_name, organization, now, validity)
    chain = _pem(ca)
    if previous is not None:
        try:
            old = _load_certs(previous.ca_cert, CA_CERT)[0]
        except CertificateError:
            old = None
        if old is not None and old.not_valid_after_utc > now:
            chain += _pem(old)
    cert, key = _serving(identity, ca, ca_key, now, validity)
    return Bundle(chain, _key_pem(ca_key), cert, key)


def _names(cert: x509.Certificate) -> tuple[set[str], set[str]]:
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return set(), set()
    return (set(san.get_values_for_type(x509.DNSName)),
            {str(a) for a in san.get_values_for_type(x509.IPAddress)})


def _signed_by(cert: x509.Certificate, ca: x509.Certificate) -> bool:
    public = ca.public_key()
    if cert.issuer != ca.subject or not isinstance(public, ec.EllipticCurvePublicKey):
        return False
    try:
        hash_algorithm = cert.signature_hash_algorithm
        assert hash_algorithm is not None
        public.verify(cert.signature, cert.tbs_certificate_bytes, ec.ECDSA(hash_algorithm))
    except (InvalidSignature, AssertionError):
        return False
    return True


def _serving_problem(bundle: Bundle, ca: x509.Certificate, identity: Identity,
                     now: dt.datetime) -> tuple[str | None, x509.Certificate | None]:
    try:
        cert = _load_certs(bundle.cert, TLS_CERT)[0]
        key = _load_key(bundle.key, TLS_KEY)
    except CertificateError as err:
        return str(err), None
    dns, ips = _names(cert)
    missing = sorted((set(identity.dns_names) - dns) | (set(identity.ip_addresses) - ips))
    public = cert.public_key()
    if not isinstance(public, ec.EllipticCurvePublicKey) or \
            _public_bytes(public) != _public_bytes(key.public_key()):
        return "tls.key does not match tls.crt", cert
    if not _signed_by(cert, ca):
        return "tls.crt is not signed by the CA", cert
    if missing:
        return "tls.crt does not name " + ", ".join(missing), cert
    if now >= cert.not_valid_after_utc - lookahead(_lifetime(cert)):
        return "tls.crt expires at " + cert.not_valid_after_utc.isoformat(), cert
    return None, cert


def _ca_problem(bundle: Bundle, now: dt.datetime) -> tuple[str | None, x509.Certificate | None]:
    try:
        ca = _load_certs(bundle.ca_cert, CA_CERT)[0]
        ca_key = _load_key(bundle.ca_key, CA_KEY)
    except CertificateError as err:
        return str(err), None
    public = ca.public_key()
    if not isinstance(public, ec.EllipticCurvePublicKey) or \
            _public_bytes(public) != _public_bytes(ca_key.public_key()):
        return "ca.key does not match ca.crt", None
    if now >= ca.not_valid_after_utc - lookahead(_lifetime(ca)):
        return "the CA expires at " + ca.not_valid_after_utc.isoformat(), ca
    return None, ca


def _lifetime(cert: x509.Certificate) -> dt.timedelta:
    return cert.not_valid_after_utc - cert.not_valid_before_utc - BACKDATE


def assess(bundle: Bundle | None, identity: Identity, *, now: dt.datetime,
           validity: dt.timedelta | None = None) -> Assessment:
    """What ``bundle`` needs at ``now`` to serve ``identity`` (see the module docstring).

    With ``validity``, a CA issued for longer than that (plus a minute) is renewed too, so a
    shorter lifetime takes effect at once."""
    if bundle is None:
        return Assessment("renew-all", "no certificates yet")
    problem, ca = _ca_problem(bundle, now)
    if problem is not None or ca is None:
        return Assessment("renew-all", problem or "no CA")
    if validity is not None and _lifetime(ca) > validity + dt.timedelta(minutes=1):
        return Assessment("renew-all", f"the CA was issued for {_lifetime(ca)}, longer than "
                                       f"{validity}")
    problem, cert = _serving_problem(bundle, ca, identity, now)
    if problem is not None or cert is None:
        return Assessment("renew-serving", problem or "no serving certificate")
    ends: Sequence[x509.Certificate] = (ca, cert)
    renew_at = min(c.not_valid_after_utc - lookahead(_lifetime(c)) for c in ends)
    return Assessment("keep", "valid", renew_at=renew_at)
