package io.affinityrouter.redis.testing;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A standalone redis-server for one test class: started before its tests, killed after them.
 * Register as {@code @RegisterExtension static final RedisServerExtension redis = new ...()}.
 * If the server cannot start, the class fails (it is never skipped).
 */
public final class RedisServerExtension implements BeforeAllCallback, AfterAllCallback {
  private RedisProcess server;

  @Override
  public void beforeAll(ExtensionContext context) {
    server = RedisProcess.start();
  }

  @Override
  public void afterAll(ExtensionContext context) {
    if (server != null) {
      server.close();
    }
  }

  /** The running server. */
  public RedisProcess server() {
    return server;
  }

  /** {@code redis://127.0.0.1:<port>}. */
  public String uri() {
    return "redis://127.0.0.1:" + server.port();
  }
}
