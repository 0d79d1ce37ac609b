#!/usr/bin/env python3
"""A local OAuth 2 / OIDC token endpoint for the tests (scripts/lib/sasl-services.sh).

Serves, on 127.0.0.1:PORT,
  POST /token   the client_credentials grant: the client id and secret come
                as HTTP Basic auth (what librdkafka and Java's
                OAuthBearerLoginCallbackHandler send) or as form fields; the
                answer is an RS256-signed JWT with sub (the client id), iat,
                exp, scope (the requested one, else the configured one), aud
                and iss, in {"access_token", "token_type", "expires_in"}.
  GET  /jwks    the JSON Web Key Set with the public key, which the Kafka
                listener's OAuthBearerValidatorCallbackHandler fetches.
Wrong credentials get 401 {"error": "invalid_client"}, as real identity
providers answer.

Python's standard library only (CI installs no pip packages): the RSA key is
made and each token signed with the `openssl` command line tool.

Usage: oidc-token-endpoint.py PORT DIR CLIENT_ID CLIENT_SECRET SCOPE AUDIENCE
DIR receives key.pem (made once) and the log of requests (requests.log).
"""

import base64
import json
import os
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

PORT, DIR, CLIENT_ID, CLIENT_SECRET, SCOPE, AUDIENCE = sys.argv[1:7]
KEY = os.path.join(DIR, "key.pem")
KID = "mirror-maker-test-key"
LIFETIME = 3600


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def make_key() -> None:
    if not os.path.exists(KEY):
        subprocess.run(["openssl", "genrsa", "-out", KEY, "2048"], check=True, capture_output=True)


def jwks() -> dict:
    # `openssl rsa -modulus` prints Modulus=<hex>; Kafka's test keys (and
    # openssl genrsa's) use the public exponent 65537.
    out = subprocess.run(["openssl", "rsa", "-in", KEY, "-noout", "-modulus"], check=True, capture_output=True, text=True).stdout
    n = int(out.strip().split("=", 1)[1], 16)
    n_bytes = n.to_bytes((n.bit_length() + 7) // 8, "big")
    e_bytes = (65537).to_bytes(3, "big")
    return {"keys": [{"kty": "RSA", "use": "sig", "alg": "RS256", "kid": KID, "n": b64url(n_bytes), "e": b64url(e_bytes)}]}


def token(sub: str, scope: str) -> str:
    now = int(time.time())
    header = {"alg": "RS256", "typ": "JWT", "kid": KID}
    claims = {"sub": sub, "iat": now, "exp": now + LIFETIME, "scope": scope, "aud": AUDIENCE, "iss": f"http://127.0.0.1:{PORT}"}
    signing_input = f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(claims).encode())}"
    sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", KEY], input=signing_input.encode(), check=True, capture_output=True).stdout
    return f"{signing_input}.{b64url(sig)}"


class Handler(BaseHTTPRequestHandler):
    def reply(self, code: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        if self.path.split("?")[0] == "/jwks":
            self.reply(200, jwks())
        else:
            self.reply(404, {"error": "not_found"})

    def do_POST(self) -> None:  # noqa: N802
        if self.path.split("?")[0] != "/token":
            self.reply(404, {"error": "not_found"})
            return
        length = int(self.headers.get("Content-Length") or 0)
        form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
        client_id, secret = form.get("client_id"), form.get("client_secret")
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Basic "):
            try:
                client_id, _, secret = base64.b64decode(auth[6:]).decode().partition(":")
            except ValueError:
                client_id = secret = None
        if form.get("grant_type") != "client_credentials":
            self.reply(400, {"error": "unsupported_grant_type"})
        elif client_id != CLIENT_ID or secret != CLIENT_SECRET:
            self.reply(401, {"error": "invalid_client"})
        else:
            self.reply(200, {"access_token": token(client_id, form.get("scope") or SCOPE), "token_type": "Bearer", "expires_in": LIFETIME})

    def log_message(self, fmt: str, *args) -> None:
        # Never the secret: only the request line and the status.
        with open(os.path.join(DIR, "requests.log"), "a") as log:
            log.write("%s %s\n" % (self.log_date_time_string(), fmt % args))


if __name__ == "__main__":
    make_key()
    ThreadingHTTPServer(("127.0.0.1", int(PORT)), Handler).serve_forever()
