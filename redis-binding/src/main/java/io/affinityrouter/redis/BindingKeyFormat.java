package io.affinityrouter.redis;

import io.affinityrouter.spi.BindingKey;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Turns a {@link BindingKey} into a Redis key:
 * {@code <prefix><len(model)>:<model>/<len(tenant)>:<tenant>/<session>}, where the lengths make the
 * layout unambiguous whatever the names contain, and {@code <session>} is the session id, or its
 * SHA-256 in hex when hashing is on (then no raw session id is ever stored). One key per binding, so
 * every script touches a single Cluster slot. Thread-safe (immutable).
 */
final class BindingKeyFormat {
  private final String prefix;
  private final boolean hashSessionIds;

  BindingKeyFormat(String prefix, boolean hashSessionIds) {
    this.prefix = prefix;
    this.hashSessionIds = hashSessionIds;
  }

  /** The hash where routers exchange their queued work ({@code RedisLoadExchange}): {@code <prefix>load}. */
  String loadKey() {
    return prefix + "load";
  }

  /** The hash of the lifecycle lease {@code name} ({@code RedisLifecycleLease}). */
  String leaseKey(String name) {
    return prefix + "lease:" + name;
  }

  /** The prefix of the per-replica sets of fleet-wide slots ({@code RedisFleetLimits}). */
  String inFlightPrefix() {
    return prefix + "inflight:";
  }

  /** The channel on which repins publish invalidations: {@code <prefix>invalidate}. */
  String invalidationChannel() {
    return prefix + "invalidate";
  }

  String redisKey(BindingKey key) {
    String session = hashSessionIds ? sha256Hex(key.sessionId()) : key.sessionId();
    return prefix + key.model().length() + ':' + key.model() + '/' + key.tenant().length() + ':'
        + key.tenant() + '/' + session;
  }

  static String sha256Hex(String value) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      return HexFormat.of().formatHex(sha.digest(value.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required by every Java platform", e);
    }
  }
}
