package io.affinityrouter.core.engine;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.affinityrouter.internal.Checks;
import io.affinityrouter.spi.ChatMessage;
import io.affinityrouter.spi.ReplicaEndpoint;
import io.affinityrouter.spi.TokenizeRequest;
import io.affinityrouter.spi.Tokenizer;
import io.affinityrouter.spi.TokenizerException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A {@link Tokenizer} that asks the engine: vLLM's {@code POST /tokenize}
 * ({@code vllm/entrypoints/openai/protocol.py}: {@code TokenizeChatRequest} with
 * {@code messages}, {@code add_generation_prompt}, {@code continue_final_message},
 * {@code add_special_tokens}; {@code TokenizeCompletionRequest} with {@code prompt},
 * {@code add_special_tokens}; the answer {@code {"count", "max_model_len", "tokens"}}). The ids are
 * the engine's own, chat template included, so they are exact by construction; each costs one
 * round trip to an engine before the request is routed.
 *
 * <p>An endpoint is asked when it serves the request's model (or names no models) and is not
 * SGLang, whose server has no such endpoint; successive requests rotate over them. A refused or
 * timed-out connection, a 5xx or a 404 moves on to the next endpoint, up to
 * {@link Builder#attempts(int)} in all; any other answer fails the request with
 * {@link TokenizerException}, whose message names the endpoint and the status, never the text.
 * An answer longer than {@link Builder#maxResponseBytes(int)} is cut off and fails. Thread-safe.
 *
 * <p>Needs {@code com.fasterxml.jackson.core:jackson-core} on the class path (an optional
 * dependency of the core).
 */
public final class EngineTokenizer implements Tokenizer {
  /** Default time an engine has to answer, connection included: {@value #DEFAULT_TIMEOUT_MILLIS} ms. */
  public static final long DEFAULT_TIMEOUT_MILLIS = 2_000;

  /** Default longest answer read: 16 MiB (over a million token ids as JSON). */
  public static final int DEFAULT_MAX_RESPONSE_BYTES = 16 << 20;

  /** Default endpoints tried per request: {@value}. */
  public static final int DEFAULT_ATTEMPTS = 2;

  private static final JsonFactory JSON = JsonFactory.builder().build();

  private final Supplier<? extends Collection<ReplicaEndpoint>> endpoints;
  private final HttpClient client;
  private final Duration timeout;
  private final int maxResponseBytes;
  private final int attempts;
  private final AtomicInteger next = new AtomicInteger();

  private EngineTokenizer(Builder b) {
    this.endpoints = Objects.requireNonNull(b.endpoints, "endpoints");
    this.client = b.client != null ? b.client
        : HttpClient.newBuilder().connectTimeout(b.timeout).build();
    this.timeout = b.timeout;
    this.maxResponseBytes = b.maxResponseBytes;
    this.attempts = b.attempts;
  }

  /**
   * A builder asking the endpoints {@code endpoints} supplies at each request (the gateway's
   * healthy backends, say).
   */
  public static Builder builder(Supplier<? extends Collection<ReplicaEndpoint>> endpoints) {
    return new Builder(Objects.requireNonNull(endpoints, "endpoints"));
  }

  @Override
  public CompletableFuture<int[]> tokenize(TokenizeRequest request) {
    Objects.requireNonNull(request, "request");
    CompletableFuture<int[]> result = new CompletableFuture<>();
    try {
      List<ReplicaEndpoint> candidates = candidates(request.model());
      if (candidates.isEmpty()) {
        result.completeExceptionally(new TokenizerException(
            "model " + request.model() + ": no vLLM endpoint serves it"));
        return result;
      }
      int start = Math.floorMod(next.getAndIncrement(), candidates.size());
      attempt(candidates, start, 0, requestBody(request), result);
    } catch (RuntimeException | IOException e) {
      result.completeExceptionally(
          new TokenizerException("tokenize: " + e.getClass().getSimpleName(), e));
    }
    return result;
  }

  private List<ReplicaEndpoint> candidates(String model) {
    List<ReplicaEndpoint> out = new ArrayList<>();
    for (ReplicaEndpoint e : endpoints.get()) {
      if (e.engine() != ReplicaEndpoint.Engine.SGLANG
          && (e.models().isEmpty() || e.models().contains(model))) {
        out.add(e);
      }
    }
    return out;
  }

  private void attempt(List<ReplicaEndpoint> candidates, int start, int tried, byte[] body,
      CompletableFuture<int[]> result) {
    ReplicaEndpoint endpoint = candidates.get((start + tried) % candidates.size());
    HttpRequest http = HttpRequest.newBuilder(EngineHttp.resolve(endpoint, "/tokenize"))
        .timeout(timeout).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
    client.sendAsync(http, BoundedBody.handler(maxResponseBytes)).whenComplete((response, error) -> {
      String why;
      if (error != null) {
        why = "endpoint " + endpoint.id() + ": " + EngineHttp.classify(error).name()
            .toLowerCase(Locale.ROOT) + " (" + EngineHttp.unwrap(error).getClass().getSimpleName()
            + ")";
      } else if (response.statusCode() == 200) {
        try {
          result.complete(tokens(response.body()));
        } catch (IOException | RuntimeException e) {
          result.completeExceptionally(new TokenizerException("endpoint " + endpoint.id()
              + ": malformed /tokenize answer (" + e.getMessage() + ")", e));
        }
        return;
      } else {
        why = "endpoint " + endpoint.id() + " answered " + response.statusCode();
        if (response.statusCode() < 500 && response.statusCode() != 404) {
          result.completeExceptionally(new TokenizerException(why));
          return;
        }
      }
      if (tried + 1 < Math.min(attempts, candidates.size())) {
        attempt(candidates, start, tried + 1, body, result);
      } else {
        result.completeExceptionally(new TokenizerException(why, error));
      }
    });
  }

  /** The JSON body of {@code POST /tokenize} for {@code request}. */
  static byte[] requestBody(TokenizeRequest request) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream(256);
    try (JsonGenerator g = JSON.createGenerator(out)) {
      g.writeStartObject();
      g.writeStringField("model", request.model());
      List<ChatMessage> messages = request.messages();
      if (messages != null) {
        g.writeArrayFieldStart("messages");
        for (ChatMessage m : messages) {
          g.writeStartObject();
          g.writeStringField("role", m.role());
          g.writeStringField("content", m.content());
          g.writeEndObject();
        }
        g.writeEndArray();
        g.writeBooleanField("add_generation_prompt", request.addGenerationPrompt());
        g.writeBooleanField("continue_final_message", request.continueFinalMessage());
      } else {
        g.writeStringField("prompt", Objects.requireNonNull(request.prompt()));
      }
      g.writeBooleanField("add_special_tokens", request.addSpecialTokens());
      g.writeEndObject();
    }
    return out.toByteArray();
  }

  /** The {@code tokens} of a {@code /tokenize} answer, checked against its {@code count}. */
  static int[] tokens(byte[] body) throws IOException {
    try (JsonParser p = JSON.createParser(body)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw new IOException("not a JSON object");
      }
      int[] tokens = null;
      long count = -1;
      for (JsonToken t = p.nextToken(); t == JsonToken.FIELD_NAME; t = p.nextToken()) {
        String field = p.currentName();
        JsonToken value = p.nextToken();
        if ("tokens".equals(field)) {
          tokens = ids(p, value);
        } else if ("count".equals(field) && value == JsonToken.VALUE_NUMBER_INT) {
          count = p.getLongValue();
        } else {
          p.skipChildren();
        }
      }
      if (tokens == null) {
        throw new IOException("tokens: missing (expected: an array of token ids)");
      }
      if (count >= 0 && count != tokens.length) {
        throw new IOException("count: " + count + " (expected: " + tokens.length
            + ", the number of tokens)");
      }
      return tokens;
    }
  }

  private static int[] ids(JsonParser p, @Nullable JsonToken value) throws IOException {
    if (value != JsonToken.START_ARRAY) {
      throw new IOException("tokens: " + value + " (expected: an array of token ids)");
    }
    int[] ids = new int[64];
    int n = 0;
    for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
      if (t != JsonToken.VALUE_NUMBER_INT || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER
          || p.getLongValue() < 0 || p.getLongValue() > Integer.MAX_VALUE) {
        throw new IOException("tokens[" + n + "]: " + t + " (expected: a token id, 0 to "
            + Integer.MAX_VALUE + ")");
      }
      if (n == ids.length) {
        ids = Arrays.copyOf(ids, n * 2);
      }
      ids[n++] = p.getIntValue();
    }
    return Arrays.copyOf(ids, n);
  }

  /** Builds an {@link EngineTokenizer}. Not thread-safe. */
  public static final class Builder {
    private final Supplier<? extends Collection<ReplicaEndpoint>> endpoints;
    private @Nullable HttpClient client;
    private Duration timeout = Duration.ofMillis(DEFAULT_TIMEOUT_MILLIS);
    private int maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES;
    private int attempts = DEFAULT_ATTEMPTS;

    private Builder(Supplier<? extends Collection<ReplicaEndpoint>> endpoints) {
      this.endpoints = endpoints;
    }

    /** The HTTP client to send with (a gateway's own, say); by default one of its own. */
    public Builder httpClient(HttpClient client) {
      this.client = Objects.requireNonNull(client, "client");
      return this;
    }

    /** How long an engine has to answer; must be positive. */
    public Builder timeout(Duration timeout) {
      this.timeout = Checks.positive(timeout, "timeout");
      return this;
    }

    /** The longest answer read, in bytes; must be {@code > 0}. */
    public Builder maxResponseBytes(int bytes) {
      this.maxResponseBytes = Checks.positive(bytes, "maxResponseBytes");
      return this;
    }

    /** Endpoints tried per request before it fails; must be {@code > 0}. */
    public Builder attempts(int attempts) {
      this.attempts = Checks.positive(attempts, "attempts");
      return this;
    }

    /** The tokenizer. */
    public EngineTokenizer build() {
      return new EngineTokenizer(this);
    }
  }
}
