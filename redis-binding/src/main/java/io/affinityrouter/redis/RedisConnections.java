package io.affinityrouter.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.api.async.RedisStringAsyncCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.masterreplica.MasterReplica;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.netty.util.HashedWheelTimer;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The Lettuce connections a store talks through: one command connection (standalone/Sentinel or
 * Cluster), and, when the local cache is on, one pub/sub connection for invalidations. Owns the
 * client (and its resources) only when the store created it. Thread-safe (Lettuce connections are).
 */
final class RedisConnections implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(RedisConnections.class.getName());
  private static final String SWITCH_MASTER = "+switch-master";

  /** Connection settings applied to clients the store creates. */
  record Settings(Duration commandTimeout, Duration connectTimeout, Duration reconnectMaxDelay,
      int requestQueueSize, Duration topologyRefreshPeriod, @Nullable SslOptions sslOptions) {}

  final RedisScriptingAsyncCommands<String, String> scripting;
  final RedisStringAsyncCommands<String, String> strings;
  final @Nullable StatefulRedisPubSubConnection<String, String> pubsub;
  private final AutoCloseable connection;
  private final @Nullable AutoCloseable ownedClient;
  private final @Nullable OwnedResources ownedResources;

  private RedisConnections(AutoCloseable connection,
      RedisScriptingAsyncCommands<String, String> scripting,
      RedisStringAsyncCommands<String, String> strings,
      @Nullable StatefulRedisPubSubConnection<String, String> pubsub,
      @Nullable AutoCloseable ownedClient, @Nullable OwnedResources ownedResources) {
    this.connection = connection;
    this.scripting = scripting;
    this.strings = strings;
    this.pubsub = pubsub;
    this.ownedClient = ownedClient;
    this.ownedResources = ownedResources;
  }

  /**
   * Resources for a client the store owns: a bounded reconnect back-off, and a 5 ms timer wheel (the
   * command timeout is enforced by this timer; Lettuce's default 100 ms tick would let a 100 ms
   * timeout fire after up to 200 ms).
   */
  static OwnedResources resources(Settings settings) {
    HashedWheelTimer timer = new HashedWheelTimer(
        new DefaultThreadFactory("affinity-router-redis-timer", true), TIMER_TICK_MS,
        TimeUnit.MILLISECONDS);
    ClientResources resources = DefaultClientResources.builder()
        .reconnectDelay(Delay.exponential(Duration.ofMillis(10), settings.reconnectMaxDelay(), 2,
            TimeUnit.MILLISECONDS))
        .timer(timer)
        .build();
    return new OwnedResources(resources, timer);
  }

  /** Client resources and the timer they were given (not stopped by Lettuce: ours to stop). */
  record OwnedResources(ClientResources resources, HashedWheelTimer timer) {
    void shutdown() {
      resources.shutdown(0, 2, TimeUnit.SECONDS);
      timer.stop();
    }
  }

  private static final long TIMER_TICK_MS = 5;

  static ClientOptions clientOptions(Settings settings) {
    ClientOptions.Builder builder = ClientOptions.builder();
    if (settings.sslOptions() != null) {
      builder.sslOptions(settings.sslOptions());
    }
    return builder
        .autoReconnect(true)
        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
        .requestQueueSize(settings.requestQueueSize())
        .socketOptions(socketOptions(settings))
        .timeoutOptions(TimeoutOptions.enabled(settings.commandTimeout()))
        .build();
  }

  static ClusterClientOptions clusterOptions(Settings settings) {
    ClusterTopologyRefreshOptions refresh = ClusterTopologyRefreshOptions.builder()
        .enableAllAdaptiveRefreshTriggers()
        .adaptiveRefreshTriggersTimeout(Duration.ofMillis(500))
        .enablePeriodicRefresh(settings.topologyRefreshPeriod())
        .dynamicRefreshSources(true)
        .closeStaleConnections(true)
        .build();
    return ClusterClientOptions.builder()
        .autoReconnect(true)
        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
        .requestQueueSize(settings.requestQueueSize())
        .socketOptions(socketOptions(settings))
        .timeoutOptions(TimeoutOptions.enabled(settings.commandTimeout()))
        .topologyRefreshOptions(refresh)
        .sslOptions(settings.sslOptions() == null ? SslOptions.create() : settings.sslOptions())
        .validateClusterNodeMembership(false)
        .build();
  }

  private static SocketOptions socketOptions(Settings settings) {
    return SocketOptions.builder().connectTimeout(settings.connectTimeout()).keepAlive(true).build();
  }

  /** Standalone or Sentinel, with a client the store creates and owns. */
  static RedisConnections ownStandalone(RedisURI uri, Settings settings, boolean withPubSub) {
    OwnedResources resources = resources(settings);
    RedisClient client = RedisClient.create(resources.resources());
    client.setOptions(clientOptions(settings));
    try {
      return standalone(client, uri, withPubSub, client, resources);
    } catch (RuntimeException e) {
      shutdown(client, resources);
      throw e;
    }
  }

  /** Standalone or Sentinel through the gateway's client (its options are the gateway's). */
  static RedisConnections sharedStandalone(RedisClient client, @Nullable RedisURI uri,
      boolean withPubSub) {
    return standalone(client, uri, withPubSub, null, null);
  }

  private static RedisConnections standalone(RedisClient client, @Nullable RedisURI uri,
      boolean withPubSub, @Nullable RedisClient owned, @Nullable OwnedResources resources) {
    AutoCloseable connection;
    RedisScriptingAsyncCommands<String, String> scripting;
    RedisStringAsyncCommands<String, String> strings;
    if (uri != null && !uri.getSentinels().isEmpty()) {
      // Master/replica through Sentinel, reopened on the sentinels' +switch-master (Lettuce's own
      // refresh drops events) or a READONLY answer, instead of writing to the old master until it
      // is demoted (about 10 s later, while it still accepts writes).
      FollowedMaster master = new FollowedMaster(
          MasterReplica.connect(client, StringCodec.UTF8, uri),
          () -> MasterReplica.connectAsync(client, StringCodec.UTF8, uri));
      watchSentinels(client, uri, master);
      connection = master;
      scripting = master.commands(RedisScriptingAsyncCommands.class);
      strings = master.commands(RedisStringAsyncCommands.class);
    } else {
      StatefulRedisConnection<String, String> c =
          uri == null ? client.connect() : client.connect(uri);
      connection = c;
      scripting = c.async();
      strings = c.async();
    }
    StatefulRedisPubSubConnection<String, String> pubsub = null;
    if (withPubSub) {
      try {
        pubsub = uri == null ? client.connectPubSub() : client.connectPubSub(uri);
      } catch (RuntimeException e) {
        closeQuietly(connection);
        throw e;
      }
    }
    return new RedisConnections(connection, scripting, strings, pubsub,
        owned == null ? null : owned::close, resources);
  }

  /** Cluster, with a client the store creates and owns. */
  static RedisConnections ownCluster(List<RedisURI> seeds, Settings settings, boolean withPubSub) {
    OwnedResources resources = resources(settings);
    RedisClusterClient client = RedisClusterClient.create(resources.resources(), seeds);
    client.setOptions(clusterOptions(settings));
    try {
      return cluster(client, withPubSub, client, resources);
    } catch (RuntimeException e) {
      shutdown(client, resources);
      throw e;
    }
  }

  /** Cluster through the gateway's client (its options are the gateway's). */
  static RedisConnections sharedCluster(RedisClusterClient client, boolean withPubSub) {
    return cluster(client, withPubSub, null, null);
  }

  private static RedisConnections cluster(RedisClusterClient client, boolean withPubSub,
      @Nullable RedisClusterClient owned, @Nullable OwnedResources resources) {
    StatefulRedisClusterConnection<String, String> connection = client.connect();
    connectMasters(connection);
    StatefulRedisPubSubConnection<String, String> pubsub = null;
    if (withPubSub) {
      try {
        pubsub = client.connectPubSub();
      } catch (RuntimeException e) {
        closeQuietly(connection);
        throw e;
      }
    }
    return new RedisConnections(connection, connection.async(), connection.async(), pubsub,
        owned == null ? null : owned::close, resources);
  }

  /**
   * Opens the connection to every master before the store serves: the cluster client connects to a
   * node on its first command, and with {@code REJECT_COMMANDS} a command that finds the node's
   * connection still opening fails ("Currently not connected"), so a gateway's first decisions after
   * start would otherwise go without the store. Best effort: a master that cannot be reached now is
   * connected by its first command, as before.
   */
  private static void connectMasters(StatefulRedisClusterConnection<String, String> connection) {
    for (RedisClusterNode node : connection.getPartitions()) {
      if (node.is(RedisClusterNode.NodeFlag.UPSTREAM) && node.getUri() != null) {
        try {
          connection.getConnection(node.getUri().getHost(), node.getUri().getPort());
        } catch (RuntimeException e) {
          // Unreachable now: its first command connects it (or fails over), as without this.
        }
      }
    }
  }

  /**
   * Subscribes to each sentinel's {@code +switch-master}: an announcement for this master reopens
   * the connection at once, where Lettuce's own refresh may drop it. A sentinel that cannot be
   * reached now is left out (logged); READONLY answers still move the connection.
   */
  private static void watchSentinels(RedisClient client, RedisURI uri, FollowedMaster master) {
    String prefix = uri.getSentinelMasterId() + " ";
    for (RedisURI sentinel : uri.getSentinels()) {
      try {
        StatefulRedisPubSubConnection<String, String> sub =
            client.connectPubSub(StringCodec.UTF8, sentinel);
        sub.addListener(new RedisPubSubAdapter<>() {
          @Override
          public void message(String channel, String message) {
            if (message.startsWith(prefix)) {
              master.switched(message);
            }
          }
        });
        sub.async().subscribe(SWITCH_MASTER);
        master.watch(sub);
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.WARNING, "cannot subscribe to the sentinel at "
            + sentinel.getHost() + ":" + sentinel.getPort() + " for failovers", e);
      }
    }
  }

  private static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception e) {
      LOG.log(System.Logger.Level.DEBUG, "closing a Redis connection", e);
    }
  }

  private static void shutdown(AutoCloseable client, OwnedResources resources) {
    try {
      client.close();
    } catch (Exception ignored) {
      // Best effort while failing to start.
    }
    resources.shutdown();
  }

  /** Closes the connections, then the client and resources if the store owns them. */
  @Override
  public void close() {
    if (pubsub != null) {
      pubsub.close();
    }
    closeQuietly(connection);
    if (ownedClient != null && ownedResources != null) {
      shutdown(ownedClient, ownedResources);
    }
  }
}
