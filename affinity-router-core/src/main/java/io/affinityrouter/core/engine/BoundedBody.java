package io.affinityrouter.core.engine;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import org.jspecify.annotations.Nullable;

/**
 * A response body read into memory up to a limit: past {@code limit} bytes the exchange is
 * cancelled and the body fails with an {@link IOException}, so an engine that answers with far
 * more than it should costs the gateway at most {@code limit} bytes, never its heap.
 *
 * <p>Reactive-streams calls are serialized by the HTTP client; the result is safe to read from any
 * thread.
 */
final class BoundedBody implements HttpResponse.BodySubscriber<byte[]> {
  private final int limit;
  private final CompletableFuture<byte[]> result = new CompletableFuture<>();
  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
  private Flow.@Nullable Subscription subscription;

  private BoundedBody(int limit) {
    this.limit = limit;
  }

  /** A handler whose bodies fail past {@code limit} bytes (&gt; 0). */
  static HttpResponse.BodyHandler<byte[]> handler(int limit) {
    if (limit <= 0) {
      throw new IllegalArgumentException("limit: " + limit + " (expected: > 0)");
    }
    return info -> new BoundedBody(limit);
  }

  /** As {@link #handler}, the body decoded as UTF-8. */
  static HttpResponse.BodyHandler<String> stringHandler(int limit) {
    HttpResponse.BodyHandler<byte[]> bytes = handler(limit);
    return info -> HttpResponse.BodySubscribers.mapping(bytes.apply(info),
        b -> new String(b, StandardCharsets.UTF_8));
  }

  @Override
  public void onSubscribe(Flow.Subscription s) {
    subscription = s;
    s.request(Long.MAX_VALUE);
  }

  @Override
  public void onNext(List<ByteBuffer> items) {
    if (result.isDone()) {
      return;
    }
    for (ByteBuffer b : items) {
      if (b.remaining() > limit - bytes.size()) {
        Flow.Subscription s = subscription;
        if (s != null) {
          s.cancel();
        }
        result.completeExceptionally(
            new IOException("body: more than " + limit + " bytes (expected: at most that)"));
        return;
      }
      if (b.hasArray()) {
        bytes.write(b.array(), b.arrayOffset() + b.position(), b.remaining());
        b.position(b.limit());
      } else {
        byte[] copy = new byte[b.remaining()];
        b.get(copy);
        bytes.write(copy, 0, copy.length);
      }
    }
  }

  @Override
  public void onError(Throwable error) {
    result.completeExceptionally(error);
  }

  @Override
  public void onComplete() {
    result.complete(bytes.toByteArray());
  }

  @Override
  public CompletionStage<byte[]> getBody() {
    return result;
  }
}
