"""An OAuth 2.1 authorization server built on Authlib (and Flask), for the
tests of crawlcheck login against an authorization server nobody here
wrote the protocol of (docs/remote.md): RFC 8414 metadata, RFC 7591 dynamic
registration, the authorization code grant with PKCE S256 (approved at
once: no person is asked), refresh tokens rotated on use, RFC 8707
resource indicators (a token names the resource it was issued for, and a
refresh for another resource is refused) and RFC 7662 introspection for
the resource server, which authenticates as the client "resource-server".

Usage: server.py RS_SECRET [EXPIRES_IN]. It listens on a free loopback
port and prints its base URL alone on its first line.
"""

import json
import secrets
import sys
import time

from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import ClientMixin, grants
from authlib.oauth2.rfc6749.errors import InvalidRequestError
from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oauth2.rfc7662 import IntrospectionEndpoint
from flask import Flask, jsonify
from werkzeug.serving import make_server

RS_SECRET = sys.argv[1]
EXPIRES_IN = int(sys.argv[2]) if len(sys.argv) > 2 else 3600

clients = {}
codes = {}
tokens = {}  # by access token and by refresh token


class Client(ClientMixin):
    def __init__(self, client_id, metadata, secret=None):
        self.client_id, self.metadata, self.secret = client_id, metadata, secret

    def get_client_id(self):
        return self.client_id

    def get_default_redirect_uri(self):
        return self.metadata["redirect_uris"][0]

    def get_allowed_scope(self, scope):
        return scope or ""

    def check_redirect_uri(self, redirect_uri):
        return redirect_uri in self.metadata.get("redirect_uris", [])

    def check_client_secret(self, client_secret):
        return self.secret is not None and secrets.compare_digest(client_secret, self.secret)

    def check_endpoint_auth_method(self, method, endpoint):
        if self.secret is None:
            return method == "none"
        return method == "client_secret_basic"

    def check_response_type(self, response_type):
        return response_type == "code"

    def check_grant_type(self, grant_type):
        return grant_type in self.metadata.get("grant_types", ["authorization_code"])


clients["resource-server"] = Client("resource-server", {"redirect_uris": [], "grant_types": []}, RS_SECRET)


class Code:
    def __init__(self, **kw):
        self.__dict__.update(kw)

    def get_redirect_uri(self):
        return self.redirect_uri

    def get_scope(self):
        return self.scope


class Token:
    def __init__(self, client_id, scope, resource, access, refresh, expires_in):
        self.client_id, self.scope, self.resource = client_id, scope, resource
        self.access_token, self.refresh_token = access, refresh
        self.issued_at, self.expires_in, self.revoked = time.time(), expires_in, False

    def check_client(self, client):
        return client.get_client_id() == self.client_id

    def get_scope(self):
        return self.scope

    def get_expires_in(self):
        return self.expires_in

    def is_expired(self):
        return time.time() >= self.issued_at + self.expires_in

    def is_revoked(self):
        return self.revoked

    def get_user(self):
        return "person"

    def get_client(self):
        return clients.get(self.client_id)


class User:
    def get_user_id(self):
        return "person"


def resource_of(req):
    """The one RFC 8707 resource of a request: required, an absolute URI."""
    values = req.payload.datalist.get("resource", [])
    if len(values) != 1 or "://" not in values[0]:
        raise InvalidRequestError("exactly one resource is required (RFC 8707)")
    return values[0]


class AuthorizationCodeGrant(grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["none"]

    def save_authorization_code(self, code, req):
        codes[code] = Code(
            code=code, client_id=req.client.get_client_id(), redirect_uri=req.payload.redirect_uri,
            scope=req.scope or "", resource=resource_of(req),
            code_challenge=req.payload.data.get("code_challenge"),
            code_challenge_method=req.payload.data.get("code_challenge_method"),
        )

    def query_authorization_code(self, code, client):
        c = codes.get(code)
        if c and c.client_id == client.get_client_id():
            return c
        return None

    def delete_authorization_code(self, authorization_code):
        codes.pop(authorization_code.code, None)

    def authenticate_user(self, authorization_code):
        # The resource of the token is the one the code was issued for; a
        # token request naming another is refused.
        if resource_of(self.request) != authorization_code.resource:
            raise InvalidRequestError("the resource differs from the authorization request's")
        self.request.resource = authorization_code.resource
        return User()


class RefreshTokenGrant(grants.RefreshTokenGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["none"]
    INCLUDE_NEW_REFRESH_TOKEN = True

    def authenticate_refresh_token(self, refresh_token):
        t = tokens.get(("refresh", refresh_token))
        if t and not t.revoked:
            return t
        return None

    def authenticate_user(self, credential):
        if resource_of(self.request) != credential.resource:
            raise InvalidRequestError("the resource differs from the token's")
        self.request.resource = credential.resource
        return User()

    def revoke_old_credential(self, credential):
        credential.revoked = True


def query_client(client_id):
    return clients.get(client_id)


def save_token(token, req):
    t = Token(req.client.get_client_id(), token.get("scope", ""), req.resource,
              token["access_token"], token.get("refresh_token"), token["expires_in"])
    tokens[("access", t.access_token)] = t
    if t.refresh_token:
        tokens[("refresh", t.refresh_token)] = t


class Registration(ClientRegistrationEndpoint):
    def authenticate_token(self, req):
        return True  # open registration, as the MCP spec's clients expect

    def save_client(self, client_info, client_metadata, req):
        client = Client(client_info["client_id"], client_metadata)
        clients[client.client_id] = client
        return client

    def get_server_metadata(self):
        return metadata()

    def generate_client_secret(self, req):
        # A public client (token_endpoint_auth_method none) gets no secret.
        if req.data.get("token_endpoint_auth_method") == "none":
            return None
        return super().generate_client_secret(req)


class Introspection(IntrospectionEndpoint):
    def query_token(self, token_string, token_type_hint):
        return tokens.get(("access", token_string))

    def introspect_token(self, token):
        return {"active": True, "client_id": token.client_id, "scope": token.scope, "aud": token.resource,
                "exp": int(token.issued_at + token.expires_in)}

    def check_permission(self, token, client, req):
        return client.get_client_id() == "resource-server"


app = Flask(__name__)
app.config["OAUTH2_TOKEN_EXPIRES_IN"] = {"authorization_code": EXPIRES_IN, "refresh_token": EXPIRES_IN}
app.config["OAUTH2_REFRESH_TOKEN_GENERATOR"] = True
server = AuthorizationServer(app, query_client=query_client, save_token=save_token)
server.register_grant(AuthorizationCodeGrant, [CodeChallenge(required=True)])
server.register_grant(RefreshTokenGrant)
server.register_endpoint(Registration)
server.register_endpoint(Introspection)

# Bound before its URL is printed: whoever reads the URL can connect.
httpd = make_server("127.0.0.1", 0, app, threaded=True)
BASE = f"http://127.0.0.1:{httpd.server_port}"


def metadata():
    return {
        "issuer": BASE,
        "authorization_endpoint": BASE + "/authorize",
        "token_endpoint": BASE + "/token",
        "registration_endpoint": BASE + "/register",
        "introspection_endpoint": BASE + "/introspect",
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": ["tools", "admin", "offline_access"],
    }


@app.get("/.well-known/oauth-authorization-server")
def well_known():
    return jsonify(metadata())


@app.get("/authorize")
def authorize():
    return server.create_authorization_response(grant_user=User())


@app.post("/token")
def token():
    return server.create_token_response()


@app.post("/register")
def register():
    return server.create_endpoint_response("client_registration")


@app.post("/introspect")
def introspect():
    return server.create_endpoint_response("introspection")


if __name__ == "__main__":
    print(BASE, flush=True)
    httpd.serve_forever()
