package io.affinityrouter.core;

import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.BindingStore;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A binding store for tests that delegates to a real one but can be switched to fail every call, to
 * hang (never answer), or to write and then never answer, and counts the calls it receives.
 */
final class ControllableStore implements BindingStore {
  enum Mode { UP, FAIL, HANG, HANG_AFTER_WRITE }

  private final BindingStore delegate;
  volatile Mode mode = Mode.UP;
  final AtomicInteger calls = new AtomicInteger();

  ControllableStore(BindingStore delegate) {
    this.delegate = delegate;
  }

  private <T> CompletionStage<T> guard(java.util.function.Supplier<CompletionStage<T>> op) {
    calls.incrementAndGet();
    switch (mode) {
      case FAIL:
        return CompletableFuture.failedFuture(new IllegalStateException("store down"));
      case HANG:
        return new CompletableFuture<>();
      case HANG_AFTER_WRITE:
        op.get();
        return new CompletableFuture<>();
      default:
        return op.get();
    }
  }

  @Override
  public CompletionStage<Binding> getOrClaim(BindingKey key, String candidate, Duration ttl) {
    return guard(() -> delegate.getOrClaim(key, candidate, ttl));
  }

  @Override
  public CompletionStage<Binding> repin(BindingKey key, long expected, String replica,
      Duration ttl) {
    return guard(() -> delegate.repin(key, expected, replica, ttl));
  }

  @Override
  public CompletionStage<Optional<Binding>> get(BindingKey key) {
    return guard(() -> delegate.get(key));
  }

  @Override
  public void close() {
    delegate.close();
  }
}
