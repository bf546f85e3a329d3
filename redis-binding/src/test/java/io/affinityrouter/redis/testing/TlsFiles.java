package io.affinityrouter.redis.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** A CA and a server certificate for 127.0.0.1, generated with {@code openssl} for one test run. */
public record TlsFiles(Path dir, Path caCert, Path serverCert, Path serverKey) {

  public static TlsFiles generate() throws Exception {
    Path dir = RedisProcess.freshDir("tls");
    String d = dir.toString();
    exec(d, "openssl", "genrsa", "-out", "ca.key", "2048");
    exec(d, "openssl", "req", "-x509", "-new", "-nodes", "-key", "ca.key", "-sha256", "-days", "2",
        "-subj", "/CN=affinity-router-test-ca", "-out", "ca.crt");
    exec(d, "openssl", "genrsa", "-out", "server.key", "2048");
    exec(d, "openssl", "req", "-new", "-key", "server.key", "-subj", "/CN=127.0.0.1", "-out",
        "server.csr");
    Files.writeString(dir.resolve("ext.cnf"), "subjectAltName=IP:127.0.0.1\n");
    exec(d, "openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "server.crt", "-days", "2", "-sha256", "-extfile", "ext.cnf");
    return new TlsFiles(dir, dir.resolve("ca.crt"), dir.resolve("server.crt"),
        dir.resolve("server.key"));
  }

  private static void exec(String dir, String... cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).directory(Path.of(dir).toFile()).redirectErrorStream(true)
        .redirectOutput(Path.of(dir, "openssl.log").toFile()).start();
    if (p.waitFor() != 0) {
      throw new IllegalStateException(List.of(cmd) + " failed: "
          + Files.readString(Path.of(dir, "openssl.log")));
    }
  }

  /** Removes the generated files. */
  public void delete() {
    RedisProcess.deleteTree(dir);
  }

  /** Starts a TLS-only redis-server with these certificates. */
  public RedisProcess startServer() {
    int port = RedisProcess.freePort();
    return RedisProcess.start(port,
        List.of("--port", "0", "--tls-port", Integer.toString(port),
            "--tls-cert-file", serverCert.toString(), "--tls-key-file", serverKey.toString(),
            "--tls-ca-cert-file", caCert.toString(), "--tls-auth-clients", "no"),
        List.of("--tls", "--cacert", caCert.toString()));
  }
}
