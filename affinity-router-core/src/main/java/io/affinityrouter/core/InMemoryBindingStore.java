package io.affinityrouter.core;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import io.affinityrouter.internal.Checks;
import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.BindingStore;
import io.affinityrouter.spi.LoadExchange;
import io.affinityrouter.spi.SessionContext;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * A {@link BindingStore} in this process's memory, on Caffeine: the default store, for a single
 * gateway (or several routers in one process, such as the simulator's gateways).
 *
 * <p>Claims and repins are atomic per key ({@code Cache.asMap().compute}); every call completes its
 * stage before returning. Each binding expires {@code ttl} after its last {@link #getOrClaim} or
 * successful {@link #repin} (Caffeine's variable expiry); at most {@code maximumSize} bindings are kept,
 * least recently used first out. Generations come from one counter for the whole store, so they
 * increase across expiry and re-claim. Thread-safe.
 *
 * <p>Each binding keeps its session's context ({@link SessionContext}), replaced under the entry's
 * lock by every call that passes one and aged on the store's clock. Reading an existing binding
 * whose context the caller wrote itself allocates nothing: each stored binding carries that
 * answer, an already completed future that every such read returns. Callers must treat returned
 * stages as read-only (as the {@link BindingStore} contract has them), never {@code obtrude} a
 * value into them.
 */
public final class InMemoryBindingStore implements BindingStore {
  /** Default bound on stored bindings: {@value}. */
  public static final long DEFAULT_MAXIMUM_SIZE = 1_000_000;

  private final Cache<BindingKey, Entry> cache;
  private final AtomicLong generations = new AtomicLong();
  private final InstantSource clock;
  private final InMemoryLoadExchange loadExchange = new InMemoryLoadExchange();

  private InMemoryBindingStore(Builder b) {
    InstantSource clock = b.clock;
    this.clock = clock;
    this.cache = Caffeine.newBuilder()
        .maximumSize(b.maximumSize)
        .expireAfter(new Expiry<BindingKey, Entry>() {
          @Override
          public long expireAfterCreate(BindingKey key, Entry value, long currentTime) {
            return value.ttlNanos;
          }

          @Override
          public long expireAfterUpdate(BindingKey key, Entry value, long currentTime,
              long currentDuration) {
            return value.ttlNanos;
          }

          @Override
          public long expireAfterRead(BindingKey key, Entry value, long currentTime,
              long currentDuration) {
            return value.ttlNanos; // a read by getOrClaim slides the TTL
          }
        })
        .ticker(() -> clock.millis() * 1_000_000L)
        .executor(Runnable::run)
        .build();
  }

  /** Returns a builder with the documented defaults. */
  public static Builder builder() {
    return new Builder();
  }

  @Override
  public CompletionStage<Binding> getOrClaim(BindingKey key, String candidateReplicaId,
      Duration ttl) {
    return claim(key, candidateReplicaId, ttl, null);
  }

  @Override
  public CompletionStage<Binding> getOrClaim(BindingKey key, String candidateReplicaId,
      Duration ttl, SessionContext turn) {
    return claim(key, candidateReplicaId, ttl, Objects.requireNonNull(turn, "turn"));
  }

  private CompletionStage<Binding> claim(BindingKey key, String candidateReplicaId, Duration ttl,
      @Nullable SessionContext turn) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(candidateReplicaId, "candidateReplicaId");
    long ttlNanos = ttlNanos(ttl);
    Entry existing = cache.getIfPresent(key); // slides the TTL (expireAfterRead)
    if (existing != null && existing.ttlNanos == ttlNanos) {
      return existing.read(turn, clock.millis()); // the common path: no allocation
    }
    boolean[] written = {false};
    Entry e = cache.asMap().compute(key, (k, v) -> {
      if (v == null) {
        written[0] = true;
        return new Entry(candidateReplicaId, generations.incrementAndGet(), ttlNanos);
      }
      return v.ttlNanos == ttlNanos ? v : v.withTtl(ttlNanos);
    });
    if (written[0]) {
      e.read(turn, clock.millis());
      return CompletableFuture.completedFuture(new Binding(e.replicaId, e.generation, true));
    }
    return e.read(turn, clock.millis());
  }

  @Override
  public CompletionStage<Binding> repin(BindingKey key, long expectedGeneration,
      String newReplicaId, Duration ttl) {
    return move(key, expectedGeneration, newReplicaId, ttl, null);
  }

  @Override
  public CompletionStage<Binding> repin(BindingKey key, long expectedGeneration,
      String newReplicaId, Duration ttl, SessionContext turn) {
    return move(key, expectedGeneration, newReplicaId, ttl, Objects.requireNonNull(turn, "turn"));
  }

  private CompletionStage<Binding> move(BindingKey key, long expectedGeneration,
      String newReplicaId, Duration ttl, @Nullable SessionContext turn) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(newReplicaId, "newReplicaId");
    long ttlNanos = ttlNanos(ttl);
    long now = clock.millis();
    boolean[] written = {false};
    Entry e = cache.asMap().compute(key, (k, v) -> {
      if (v == null || v.generation == expectedGeneration) {
        written[0] = true;
        Entry fresh = new Entry(newReplicaId, generations.incrementAndGet(), ttlNanos);
        fresh.read(turn, now);
        return fresh;
      }
      return v;
    });
    if (written[0]) {
      return CompletableFuture.completedFuture(new Binding(e.replicaId, e.generation, true));
    }
    SessionContext stored = e.context(now);
    return CompletableFuture.completedFuture(new Binding(e.replicaId, e.generation, false,
        stored != null && (turn == null || stored.writer() != turn.writer()) ? stored : null));
  }

  @Override
  public CompletionStage<Optional<Binding>> get(BindingKey key) {
    Entry e = cache.policy().getIfPresentQuietly(Objects.requireNonNull(key, "key"));
    return CompletableFuture.completedFuture(e == null ? Optional.empty()
        : Optional.of(new Binding(e.replicaId, e.generation, false, e.context(clock.millis()))));
  }

  /** The exchange of the routers in this process that share this store. */
  @Override
  public Optional<LoadExchange> sharedLoadExchange() {
    return Optional.of(loadExchange);
  }

  /** Bindings stored now (approximate while expiries are pending). */
  public long estimatedSize() {
    return cache.estimatedSize();
  }

  /** Does nothing: the store owns no resources beyond memory. */
  @Override
  public void close() {}

  private static long ttlNanos(Duration ttl) {
    return Checks.positive(ttl, "ttl").toNanos();
  }

  private static final class Entry {
    final String replicaId;
    final long generation;
    final long ttlNanos;
    /** The answer to a read by the context's own writer, built once: such reads allocate nothing. */
    final CompletableFuture<Binding> asRead;
    // The session's context, copied field by field (the caller's value is not kept, so it need
    // not be allocated at all); writer 0: none. Under the entry's lock.
    private long writer;
    private int prompt;
    private int output;
    private int anchorBlocks;
    private long anchorHash;
    private long atMillis;

    Entry(String replicaId, long generation, long ttlNanos) {
      this.replicaId = replicaId;
      this.generation = generation;
      this.ttlNanos = ttlNanos;
      this.asRead = CompletableFuture.completedFuture(new Binding(replicaId, generation, false));
    }

    synchronized Entry withTtl(long ttl) {
      Entry e = new Entry(replicaId, generation, ttl);
      e.writer = writer;
      e.prompt = prompt;
      e.output = output;
      e.anchorBlocks = anchorBlocks;
      e.anchorHash = anchorHash;
      e.atMillis = atMillis;
      return e;
    }

    /**
     * Stores {@code next} (when given) as the context and answers the read: with the context
     * before, unless it is absent or {@code next}'s writer wrote it.
     */
    CompletableFuture<Binding> read(@Nullable SessionContext next, long now) {
      SessionContext before = null;
      synchronized (this) {
        if (writer != 0 && (next == null || writer != next.writer())) {
          before = new SessionContext(writer, prompt, output, anchorBlocks, anchorHash,
              Math.max(0, now - atMillis));
        }
        if (next != null) {
          writer = next.writer();
          prompt = next.promptTokens();
          output = next.outputTokens();
          anchorBlocks = next.anchorBlocks();
          anchorHash = next.anchorHash();
          atMillis = now;
        }
      }
      return before == null ? asRead
          : CompletableFuture.completedFuture(new Binding(replicaId, generation, false, before));
    }

    synchronized @Nullable SessionContext context(long now) {
      return writer == 0 ? null : new SessionContext(writer, prompt, output, anchorBlocks,
          anchorHash, Math.max(0, now - atMillis));
    }
  }

  /** Builds an {@link InMemoryBindingStore}. Not thread-safe. */
  public static final class Builder {
    private long maximumSize = DEFAULT_MAXIMUM_SIZE;
    private InstantSource clock = InstantSource.system();

    private Builder() {}

    /** Sets the most bindings kept (default {@value #DEFAULT_MAXIMUM_SIZE}); must be {@code > 0}. */
    public Builder maximumSize(long maximumSize) {
      this.maximumSize = Checks.positive(maximumSize, "maximumSize");
      return this;
    }

    /** Sets the clock expiry is measured on (default the system clock; tests and the simulator
     * pass their own). */
    public Builder clock(InstantSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** Returns the store. */
    public InMemoryBindingStore build() {
      return new InMemoryBindingStore(this);
    }
  }
}
