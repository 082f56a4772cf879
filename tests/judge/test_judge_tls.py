"""The TLS context of judge clients: made once per process, and still a verifying one."""

from __future__ import annotations

import ssl

import httpx2

from textgen_core.judge import transport


def test_every_client_shares_one_verifying_tls_context():
    first = transport._tls_context(httpx2)
    assert transport._tls_context(httpx2) is first  # made once: each new one re-reads the CA store
    assert isinstance(first, ssl.SSLContext)
    assert first.verify_mode == ssl.CERT_REQUIRED and first.check_hostname
    assert first.cert_store_stats()["x509_ca"] > 0  # the system's CA certificates are loaded
    for _ in range(2):
        assert transport._http_client(4) is not None
    assert transport._tls_context(httpx2) is first
