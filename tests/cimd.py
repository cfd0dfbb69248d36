"""Test-only Client ID Metadata Documents: an https server on loopback whose certificate comes from a local
test CA (trustme), and a metadata fetcher for django-oauth-toolkit that trusts that CA for the named loopback
hosts only. Never in production settings: a test switches CIMD_METADATA_FETCHER to it with the settings
fixture. The fetcher keeps the toolkit's own reading of the answer (status, JSON type, the 16 KB bound), and
the toolkit keeps every check after it (client_id equal to the URL, public client, redirect URIs).
"""

import json
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import trustme
import urllib3
from oauth2_provider.cimd import CIMDError, SafeMetadataFetcher

NAMED_HOSTS = ("app.cimd.localhost",)  # served on 127.0.0.1 under these names, certified by the test CA
FETCH_TIMEOUT_SECONDS = 5  # as the toolkit's CIMD_FETCH_TIMEOUT_SECONDS


class LoopbackFetcher(SafeMetadataFetcher):
    """Fetches a metadata document from the named loopback hosts, trusting only the test CA (`ca_path`, set by
    the server below). The toolkit's fetcher refuses loopback addresses, rightly, so tests need this one."""

    ca_path: str | None = None

    def fetch(self, client_id):
        parsed = urlsplit(client_id)
        if parsed.scheme != "https" or parsed.hostname not in NAMED_HOSTS or self.ca_path is None:
            raise CIMDError("not a document of the test server")
        pool = urllib3.HTTPSConnectionPool(
            host="127.0.0.1",
            port=parsed.port,
            timeout=urllib3.Timeout(FETCH_TIMEOUT_SECONDS),
            retries=False,
            maxsize=1,
            ssl_context=ssl.create_default_context(cafile=self.ca_path),
            server_hostname=parsed.hostname,
        )
        try:
            response = pool.urlopen(
                "GET",
                parsed.path,
                headers={"Host": parsed.netloc, "Accept": "application/json"},
                redirect=False,
                preload_content=False,
            )
            try:
                return self._read_document(response)
            finally:
                response.release_conn()
        except urllib3.exceptions.HTTPError as error:
            raise CIMDError(f"could not fetch client_id document: {error}") from error
        finally:
            pool.close()


class _DocumentHTTPServer(ThreadingHTTPServer):
    documents: dict[str, bytes]  # by path, as DocumentServer.publish serves them


class _Documents(BaseHTTPRequestHandler):
    server: _DocumentHTTPServer

    def do_GET(self):
        body = self.server.documents.get(self.path)
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body or b"")))
        self.end_headers()
        self.wfile.write(body or b"")

    def log_message(self, *args):
        pass


class DocumentServer:
    """An https server on 127.0.0.1 serving metadata documents by path, as `https://app.cimd.localhost:PORT`."""

    def __init__(self, tmp_path):
        ca = trustme.CA()
        self._server = _DocumentHTTPServer(("127.0.0.1", 0), _Documents)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ca.issue_cert(*NAMED_HOSTS).configure_cert(context)
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self._server.documents = {}
        self.ca_path = str(tmp_path / "test-ca.pem")
        ca.cert_pem.write_to_path(self.ca_path)
        self.origin = f"https://{NAMED_HOSTS[0]}:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def publish(self, path: str, document: dict | bytes) -> str:
        """Serve `document` at `path`; returns its URL, the client_id it stands for."""
        self._server.documents[path] = document if isinstance(document, bytes) else json.dumps(document).encode()
        return self.origin + path

    def close(self):
        self._server.shutdown()
        self._server.server_close()
