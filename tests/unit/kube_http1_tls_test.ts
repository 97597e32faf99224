/**
 * kinglet's HTTP/1.1 client over TLS, against loopback servers holding
 * certificates from kinglet's own CA code: the server verified with the
 * kubeconfig's CA, a kept connection reused, the client certificate
 * presented to a server that demands one, and a CA that did not sign the
 * server named as a TLS failure with the hint the transport gave before, and
 * kept connections that a network cut closes leaving the pool.
 */
import assert from "node:assert/strict";
import https from "node:https";
import type { TLSSocket } from "node:tls";
import { KubeClient } from "../../lib/kube/client.ts";
import type { ClusterConfig } from "../../lib/kube/config.ts";
import { TransportError } from "../../lib/kube/errors.ts";
import { CONFIG_MAPS } from "../../lib/kube/resources.ts";
import type { KubeObject } from "../../lib/kube/types.ts";
import { noToken, staticToken } from "../../lib/kube/token_source.ts";
import { TcpProxy } from "../integration/_tcp_proxy.ts";
import {
  createCertificateAuthority,
  issueCertificate,
  issueServingCertificate,
} from "../../lib/x509/mod.ts";

const ca = await createCertificateAuthority({ commonName: "test-ca" });
const serving = await issueServingCertificate(ca, { ipAddresses: ["127.0.0.1"] });
const user = await issueCertificate(ca, {
  subject: { commonName: "edge-user" },
  usage: "clientAuth",
});

/** A TLS server answering each request with the port it came from and what authenticated it. */
function tlsServer() {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, ...serving, onListen() {} },
    (req, info) =>
      Response.json({
        metadata: { name: String(info.remoteAddr.port) },
        data: { authorization: req.headers.get("authorization") ?? "" },
      }),
  );
  return { server, url: `https://127.0.0.1:${server.addr.port}` };
}

function config(server: string, extra: Partial<ClusterConfig> = {}): ClusterConfig {
  return { server, auth: noToken, namespace: "a", source: "test", ...extra };
}

Deno.test("over TLS with the kubeconfig's CA, requests share one connection", async () => {
  const { server, url } = tlsServer();
  const client = new KubeClient(config(url, { caCert: ca.cert, auth: staticToken("t0k") }));
  try {
    type Answer = KubeObject & { data: { authorization: string } };
    const first = await client.get<Answer>(CONFIG_MAPS, "x");
    const second = await client.get<Answer>(CONFIG_MAPS, "y");
    assert.equal(first.data.authorization, "Bearer t0k");
    assert.equal(first.metadata?.name, second.metadata?.name, "the same client port twice");
  } finally {
    client.close();
    await server.shutdown();
  }
});

Deno.test("the client certificate is presented to a server that demands one", {
  // node:https keeps resources of its own past close().
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  const server = https.createServer({
    ...serving,
    ca: [ca.cert],
    requestCert: true,
    rejectUnauthorized: true,
  }, (req, res) => {
    const socket = req.socket as TLSSocket;
    const name = `${socket.getPeerCertificate().subject?.CN}:${socket.remotePort}`;
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ metadata: { name } }));
  });
  const { promise: listening, resolve } = Promise.withResolvers<void>();
  server.listen(0, "127.0.0.1", resolve);
  await listening;
  const url = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
  const mtls = new KubeClient(
    config(url, { caCert: ca.cert, clientCert: user.cert, clientKey: user.key }),
  );
  const anonymous = new KubeClient(config(url, { caCert: ca.cert }));
  try {
    const first = await mtls.get(CONFIG_MAPS, "x");
    const second = await mtls.get(CONFIG_MAPS, "y");
    assert.match(first.metadata?.name ?? "", /^edge-user:\d+$/);
    assert.equal(first.metadata?.name, second.metadata?.name, "the same connection twice");
    const refused = await anonymous.get(CONFIG_MAPS, "x").catch((e) => e);
    assert.ok(refused instanceof TransportError, "no certificate, no answer");
    assert.match(refused.message, /TLS failed: .*CertificateRequired/);
  } finally {
    mtls.close();
    anonymous.close();
    server.close();
    server.closeAllConnections();
  }
});

Deno.test("a CA that did not sign the server is a TLS failure that says what to check", async () => {
  const other = await createCertificateAuthority({ commonName: "other-ca" });
  const { server, url } = tlsServer();
  const clients = [
    new KubeClient(config(url, { caCert: other.cert })),
    new KubeClient(config(url, { caCert: other.cert, clientCert: user.cert, clientKey: user.key })),
  ];
  try {
    for (const client of clients) {
      const err = await client.get(CONFIG_MAPS, "x").catch((e) => e);
      assert.ok(err instanceof TransportError);
      assert.match(
        err.message,
        /^get \/api\/v1\/namespaces\/a\/configmaps\/x: cannot reach https:\/\/127\.0\.0\.1:\d+: TLS failed: .*invalid peer certificate: UnknownIssuer; check the certificate authority and client certificate in test$/,
      );
      assert.equal(err.server, url);
    }
  } finally {
    for (const client of clients) client.close();
    await server.shutdown();
  }
});

Deno.test("after the network cuts kept TLS connections, the next create goes out on a new one", async () => {
  const { server, url } = tlsServer();
  const through = new TcpProxy(url);
  const client = new KubeClient(config(through.url, { caCert: ca.cert }));
  try {
    await Promise.all(["a", "b"].map((name) => client.get(CONFIG_MAPS, name)));
    assert.equal(through.accepted, 2);
    through.cut();
    // The kept connections learn of it while idle; a create, never sent twice, needs a new one.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const created = await client.create(CONFIG_MAPS, { metadata: { name: "new" } });
    assert.ok(created.metadata?.name);
    assert.equal(through.accepted, 3);
  } finally {
    client.close();
    await through.close();
    await server.shutdown();
  }
});

Deno.test("a TLS connection cut under a request is said to be closed, with no certificate advice", async () => {
  const arrived = Promise.withResolvers<void>();
  const answer = Promise.withResolvers<void>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, ...serving, onListen() {} },
    async () => {
      arrived.resolve();
      await answer.promise;
      return Response.json({ metadata: { name: "late" } });
    },
  );
  const through = new TcpProxy(`https://127.0.0.1:${server.addr.port}`);
  const client = new KubeClient(config(through.url, { caCert: ca.cert }));
  try {
    // A create is never sent twice, so the cut reaches the caller.
    const creating = client.create(CONFIG_MAPS, { metadata: { name: "new" } }).catch((e) => e);
    await arrived.promise;
    through.cut();
    const err = await creating;
    assert.ok(err instanceof TransportError, String(err));
    assert.match(
      err.message,
      /^create \/api\/v1\/namespaces\/a\/configmaps: cannot reach https:\/\/127\.0\.0\.1:\d+: the connection closed before the answer came \(.+\); the API server or something on the way to it closed it$/,
    );
    assert.doesNotMatch(err.message, /certificate/);
  } finally {
    answer.resolve();
    client.close();
    await through.close();
    await server.shutdown();
  }
});

Deno.test("a server whose certificate names another host is verified by tls-server-name", async () => {
  const named = await issueServingCertificate(ca, { dnsNames: ["api.internal"] });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, ...named, onListen() {} },
    () => Response.json({ metadata: { name: "found" } }),
  );
  const url = `https://127.0.0.1:${server.addr.port}`;
  const byName = new KubeClient(
    config(url, { caCert: ca.cert, tlsServerName: "api.internal", auth: staticToken("t") }),
  );
  const byAddress = new KubeClient(config(url, { caCert: ca.cert, auth: staticToken("t") }));
  try {
    const found = await byName.get<KubeObject>(CONFIG_MAPS, "x");
    assert.equal(found.metadata?.name, "found");
    const err = await byAddress.get(CONFIG_MAPS, "x").catch((e) => e);
    assert.ok(err instanceof TransportError, String(err));
    assert.match(err.message, /TLS failed: .*certificate/);
  } finally {
    byName.close();
    byAddress.close();
    await server.shutdown();
  }
});
