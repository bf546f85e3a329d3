package io.affinityrouter.redis;

import io.lettuce.core.RedisReadOnlyException;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A master connection reopened through the sentinels when the server it talks to answers
 * {@code READONLY}: that server was demoted by a failover. Lettuce's own Sentinel topology refresh
 * runs at most once per 5 s and drops the sentinel events that arrive inside that window, which has
 * kept writes on a demoted master for tens of seconds. It is also reopened at once when a
 * sentinel it {@linkplain #watch watches} announces {@code +switch-master} ({@link #switched}).
 * Commands reach the current connection through proxies of the command interfaces; a reconnect
 * on READONLY is tried at most once per {@link #MIN_RECONNECT_NANOS}. Thread-safe.
 */
final class FollowedMaster implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(FollowedMaster.class.getName());
  static final long MIN_RECONNECT_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final
      Supplier<? extends CompletionStage<? extends StatefulRedisConnection<String, String>>>
      connector;
  private volatile StatefulRedisConnection<String, String> current;
  private final AtomicBoolean reconnecting = new AtomicBoolean();
  private final AtomicLong lastAttempt = new AtomicLong(System.nanoTime() - MIN_RECONNECT_NANOS);
  private final AtomicLong reconnects = new AtomicLong();
  private final List<AutoCloseable> watches = new CopyOnWriteArrayList<>();
  private volatile boolean again; // a switch announced while a reopen was under way
  private volatile boolean closed;

  /**
   * @param first the connection opened at start
   * @param connector opens a new connection to the master the sentinels name now
   */
  FollowedMaster(StatefulRedisConnection<String, String> first,
      Supplier<? extends CompletionStage<? extends StatefulRedisConnection<String, String>>>
          connector) {
    this.current = first;
    this.connector = connector;
  }

  /** The command interface {@code type} (one that {@link RedisAsyncCommands} extends) over it. */
  <T> T commands(Class<T> type) {
    if (!type.isAssignableFrom(RedisAsyncCommands.class)) {
      throw new IllegalArgumentException(type + " (expected: an interface of RedisAsyncCommands)");
    }
    return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
        (proxy, method, args) -> invoke(proxy, method, args)));
  }

  private Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
    if (method.getDeclaringClass() == Object.class) {
      return switch (method.getName()) {
        case "equals" -> proxy == args[0];
        case "hashCode" -> System.identityHashCode(proxy);
        default -> "FollowedMaster commands";
      };
    }
    Object result;
    try {
      result = method.invoke(current.async(), args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
    if (result instanceof CompletionStage<?> stage) {
      stage.whenComplete((v, e) -> {
        if (e != null && readOnly(e)) {
          demoted();
        }
      });
    }
    return result;
  }

  private static boolean readOnly(Throwable e) {
    Throwable t = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    return t instanceof RedisReadOnlyException;
  }

  /** The server answered READONLY: reopen through the sentinels, unless tried too recently. */
  void demoted() {
    long now = System.nanoTime();
    long last = lastAttempt.get();
    if (closed || now - last < MIN_RECONNECT_NANOS || !lastAttempt.compareAndSet(last, now)) {
      return;
    }
    reopen("the Redis master answered READONLY (a failover demoted it)");
  }

  /**
   * A sentinel announced {@code +switch-master} for this master: reopen now, whatever the interval,
   * and once more after a reopen under way (it may have asked the sentinels before the switch).
   */
  void switched(String announcement) {
    if (closed) {
      return;
    }
    lastAttempt.set(System.nanoTime());
    again = true;
    reopen("a sentinel announced a new master: " + announcement);
  }

  /** Closes {@code watch} (a sentinel subscription) with this connection. */
  void watch(AutoCloseable watch) {
    watches.add(watch);
  }

  private void reopen(String why) {
    if (closed || !reconnecting.compareAndSet(false, true)) {
      return;
    }
    again = false;
    LOG.log(System.Logger.Level.WARNING, why + ": reconnecting through the sentinels");
    CompletionStage<? extends StatefulRedisConnection<String, String>> opening;
    try {
      opening = connector.get();
    } catch (RuntimeException e) {
      reconnecting.set(false);
      LOG.log(System.Logger.Level.WARNING, "reconnecting to the Redis master failed", e);
      return;
    }
    opening.whenComplete((connection, error) -> {
      try {
        if (error != null) {
          LOG.log(System.Logger.Level.WARNING, "reconnecting to the Redis master failed", error);
          return;
        }
        StatefulRedisConnection<String, String> old;
        synchronized (this) {
          if (closed) {
            old = connection;
          } else {
            old = current;
            current = connection;
            reconnects.incrementAndGet();
          }
        }
        old.closeAsync(); // what is in flight there fails, as it would have (READONLY)
      } finally {
        reconnecting.set(false);
        if (again) {
          reopen("a new master was announced while reconnecting");
        }
      }
    });
  }

  /** Connections reopened since start. */
  long reconnects() {
    return reconnects.get();
  }

  @Override
  public void close() {
    StatefulRedisConnection<String, String> c;
    synchronized (this) {
      closed = true;
      c = current;
    }
    for (AutoCloseable w : watches) {
      try {
        w.close();
      } catch (Exception e) {
        LOG.log(System.Logger.Level.DEBUG, "closing a sentinel subscription", e);
      }
    }
    c.close();
  }
}
