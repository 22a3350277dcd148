"""Webhook certificates (mpi_controller.webhook.certs): what is issued, and what assess decides
at each moment of a bundle's life."""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec

from mpi_controller.webhook.certs import (
    Bundle,
    CertificateError,
    Identity,
    assess,
    issue,
    lookahead,
)

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
HOUR = dt.timedelta(hours=1)
SERVICE = Identity(("mpi-operator-webhook.mpi-operator.svc",))


def make(identity: Identity = SERVICE, validity: dt.timedelta = 4 * HOUR, **kw: object) -> Bundle:
    return issue(identity, now=NOW, validity=validity, ca_name="test-ca", organization="test",
                 **kw)  # type: ignore[arg-type]


def certs(pem: bytes) -> list[x509.Certificate]:
    return x509.load_pem_x509_certificates(pem)


def test_issue_makes_a_ca_and_a_serving_certificate_it_signed() -> None:
    bundle = make(Identity(("svc.ns.svc", "localhost"), ("127.0.0.1",)))
    [ca] = certs(bundle.ca_cert)
    [cert] = certs(bundle.cert)
    assert ca.subject.rfc4514_string() == "O=test,CN=test-ca"
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True
    assert cert.issuer == ca.subject
    public = ca.public_key()
    assert isinstance(public, ec.EllipticCurvePublicKey)
    public.verify(cert.signature, cert.tbs_certificate_bytes, ec.ECDSA(
        cert.signature_hash_algorithm))  # type: ignore[arg-type]
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["svc.ns.svc", "localhost"]
    assert san.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    assert cert.not_valid_before_utc == NOW - HOUR  # backdated, as cert-controller does
    assert cert.not_valid_after_utc == NOW + 4 * HOUR
    assert ca.not_valid_after_utc == NOW + 4 * HOUR


def test_secret_data_round_trips() -> None:
    bundle = make()
    data = bundle.secret_data()
    assert sorted(data) == ["ca.crt", "ca.key", "tls.crt", "tls.key"]
    assert base64.b64decode(data["tls.crt"]) == bundle.cert
    assert Bundle.from_secret_data(data) == bundle


@pytest.mark.parametrize(("data", "message"), [
    (None, "the Secret has no data"),
    ({}, "the Secret has no ca.crt"),
    ({"ca.crt": "eA==", "ca.key": "eA==", "tls.crt": "eA=="}, "the Secret has no tls.key"),
    ({"ca.crt": "!!", "ca.key": "eA==", "tls.crt": "eA==", "tls.key": "eA=="},
     "ca.crt is not base64"),
])
def test_unreadable_secret_data(data: object, message: str) -> None:
    with pytest.raises(CertificateError, match=message):
        Bundle.from_secret_data(data)


def test_lookahead_is_90_days_or_a_quarter_of_short_lifetimes() -> None:
    assert lookahead(dt.timedelta(days=3650)) == dt.timedelta(days=90)
    assert lookahead(4 * HOUR) == HOUR


def test_a_fresh_bundle_is_kept_until_its_renewal_time() -> None:
    bundle = make()
    verdict = assess(bundle, SERVICE, now=NOW)
    assert (verdict.action, verdict.renew_at) == ("keep", NOW + 3 * HOUR)
    assert assess(bundle, SERVICE, now=NOW + 3 * HOUR - dt.timedelta(seconds=1)).action == "keep"


def test_near_the_end_everything_is_renewed() -> None:
    verdict = assess(make(), SERVICE, now=NOW + 3 * HOUR)
    assert verdict.action == "renew-all"
    assert verdict.reason.startswith("the CA expires at 2026-01-01T04:00:00")


def test_a_longer_lived_ca_keeps_and_only_the_serving_certificate_is_renewed() -> None:
    long_lived = make(validity=100 * HOUR)
    short = issue(SERVICE, now=NOW, validity=4 * HOUR, ca_name="x", organization="y",
                  reuse_ca=long_lived)
    assert short.ca_cert == long_lived.ca_cert
    verdict = assess(short, SERVICE, now=NOW + 3 * HOUR)
    assert verdict.action == "renew-serving"
    assert verdict.reason.startswith("tls.crt expires at")


@pytest.mark.parametrize(("change", "action", "reason"), [
    (lambda b: None, "renew-all", "no certificates yet"),
    (lambda b: Bundle(b"junk", b.ca_key, b.cert, b.key), "renew-all",
     "ca.crt is not a PEM certificate"),
    (lambda b: Bundle(b.ca_cert, make().ca_key, b.cert, b.key), "renew-all",
     "ca.key does not match ca.crt"),
    (lambda b: Bundle(b.ca_cert, b.ca_key, make().cert, b.key), "renew-serving",
     "tls.key does not match tls.crt"),
    (lambda b: Bundle(b.ca_cert, b.ca_key, other.cert, other.key), "renew-serving",
     "tls.crt is not signed by the CA"),
    (lambda b: Bundle(b.ca_cert, b.ca_key, b.cert, b"junk"), "renew-serving",
     "tls.key is not a PEM private key"),
])
def test_problems_and_what_they_need(change: object, action: str, reason: str) -> None:
    bundle = change(make())  # type: ignore[operator]
    verdict = assess(bundle, SERVICE, now=NOW)
    assert verdict.action == action
    assert verdict.reason.startswith(reason)


other = make()


def test_a_certificate_missing_a_name_is_reissued_by_the_same_ca() -> None:
    bundle = make()
    wider = Identity(SERVICE.dns_names, ("127.0.0.1",))
    verdict = assess(bundle, wider, now=NOW)
    assert (verdict.action, verdict.reason) == ("renew-serving", "tls.crt does not name 127.0.0.1")
    renewed = issue(wider, now=NOW, validity=4 * HOUR, ca_name="x", organization="y",
                    reuse_ca=bundle)
    assert renewed.ca_cert == bundle.ca_cert
    assert renewed.ca_key == bundle.ca_key
    assert assess(renewed, wider, now=NOW).action == "keep"


def test_a_new_ca_is_published_beside_the_previous_one_while_that_is_valid() -> None:
    old = make()
    rotated = issue(SERVICE, now=NOW + 3 * HOUR, validity=4 * HOUR, ca_name="test-ca",
                    organization="test", previous=old)
    chain = certs(rotated.ca_cert)
    assert [c.not_valid_after_utc for c in chain] == [NOW + 7 * HOUR, NOW + 4 * HOUR]
    assert chain[1] == certs(old.ca_cert)[0]
    assert assess(rotated, SERVICE, now=NOW + 3 * HOUR).action == "keep"
    later = issue(SERVICE, now=NOW + 6 * HOUR, validity=4 * HOUR, ca_name="test-ca",
                  organization="test", previous=rotated)
    assert len(certs(later.ca_cert)) == 2  # the expired first CA is gone
    assert certs(later.ca_cert)[1] == chain[0]


def test_a_ca_issued_for_longer_than_the_validity_is_renewed() -> None:
    bundle = make(validity=100 * HOUR)
    assert assess(bundle, SERVICE, now=NOW, validity=100 * HOUR).action == "keep"
    verdict = assess(bundle, SERVICE, now=NOW, validity=4 * HOUR)
    assert verdict.action == "renew-all"
    assert verdict.reason == "the CA was issued for 4 days, 4:00:00, longer than 4:00:00"
