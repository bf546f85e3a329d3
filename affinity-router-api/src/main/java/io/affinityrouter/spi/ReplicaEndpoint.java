package io.affinityrouter.spi;

import io.affinityrouter.Replica;
import io.affinityrouter.internal.Checks;
import java.net.URI;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Where one inference server is and what it is, as configuration or a {@link ReplicaDiscovery}
 * names it: its replica id, the base URL of its HTTP server (its {@code /metrics}, its OpenAI API and,
 * for vLLM, its sleep-mode endpoints live under it), the engine it runs, the models it is meant to
 * serve and, optionally, where it publishes KV-cache events.
 *
 * <p>Immutable and thread-safe; equal when every field is equal (a discovery that reports an
 * endpoint with the same id but other fields has changed it).
 */
public final class ReplicaEndpoint {
  private final String id;
  private final URI baseUri;
  private final Engine engine;
  private final Set<String> models;
  private final Optional<URI> kvEventsUri;
  private final Optional<URI> kvEventsReplayUri;
  private final int dataParallelRanks;

  private ReplicaEndpoint(Builder b) {
    this.id = b.id;
    this.baseUri = b.baseUri;
    this.engine = b.engine;
    this.models = Collections.unmodifiableSet(new LinkedHashSet<>(b.models));
    this.kvEventsUri = Optional.ofNullable(b.kvEventsUri);
    this.kvEventsReplayUri = Optional.ofNullable(b.kvEventsReplayUri);
    this.dataParallelRanks = b.dataParallelRanks;
  }

  /**
   * Returns a builder for the endpoint {@code id} at {@code baseUri}: engine {@link Engine#UNKNOWN},
   * models as its metrics name them, no KV-event endpoint, one data-parallel rank.
   *
   * @throws IllegalArgumentException if {@code id} is blank or longer than
   *     {@value Replica#MAX_ID_LENGTH} characters, or {@code baseUri} is not an absolute
   *     {@code http}/{@code https} URI with a host and without a query or fragment
   * @throws NullPointerException if an argument is null
   */
  public static Builder builder(String id, URI baseUri) {
    return new Builder(id, baseUri);
  }

  /** Shorthand for {@code builder(id, URI.create(baseUri)).build()}; same checks. */
  public static ReplicaEndpoint of(String id, String baseUri) {
    return builder(id, URI.create(Objects.requireNonNull(baseUri, "baseUri"))).build();
  }

  /** The replica id (the {@link Replica#id()} of the replica built for this endpoint). */
  public String id() {
    return id;
  }

  /** The base URL, without a trailing slash, e.g. {@code http://10.0.0.7:8000}. */
  public URI baseUri() {
    return baseUri;
  }

  /** The engine the server runs. */
  public Engine engine() {
    return engine;
  }

  /**
   * The models the replica is configured to serve, in the order given; empty means "as its
   * metrics' {@code model_name} labels say". Unmodifiable.
   */
  public Set<String> models() {
    return models;
  }

  /**
   * Where the engine publishes KV-cache events (vLLM's ZMQ publisher, e.g.
   * {@code tcp://10.0.0.7:5557}), if it does.
   */
  public Optional<URI> kvEventsUri() {
    return kvEventsUri;
  }

  /**
   * Where the engine answers replay requests for KV-event batches a subscriber missed (vLLM's
   * {@code replay_endpoint}, e.g. {@code tcp://10.0.0.7:5558}), if it serves them.
   */
  public Optional<URI> kvEventsReplayUri() {
    return kvEventsReplayUri;
  }

  /**
   * How many data-parallel ranks publish KV events ({@code 1} unless the engine runs several
   * data-parallel engines, each publishing on its own port from {@link #kvEventsUri()} upward).
   */
  public int dataParallelRanks() {
    return dataParallelRanks;
  }

  /** Returns a builder initialised with this endpoint's fields. */
  public Builder toBuilder() {
    Builder b = new Builder(id, baseUri).engine(engine).models(models)
        .dataParallelRanks(dataParallelRanks);
    kvEventsUri.ifPresent(b::kvEventsUri);
    kvEventsReplayUri.ifPresent(b::kvEventsReplayUri);
    return b;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof ReplicaEndpoint)) {
      return false;
    }
    ReplicaEndpoint that = (ReplicaEndpoint) o;
    return id.equals(that.id) && baseUri.equals(that.baseUri) && engine == that.engine
        && models.equals(that.models) && kvEventsUri.equals(that.kvEventsUri)
        && kvEventsReplayUri.equals(that.kvEventsReplayUri)
        && dataParallelRanks == that.dataParallelRanks;
  }

  @Override
  public int hashCode() {
    return Objects.hash(id, baseUri, engine, models, kvEventsUri, kvEventsReplayUri,
        dataParallelRanks);
  }

  @Override
  public String toString() {
    return "ReplicaEndpoint{" + id + ", " + baseUri + ", " + engine
        + (models.isEmpty() ? "" : ", models=" + models)
        + kvEventsUri.map(u -> ", kvEvents=" + u + "×" + dataParallelRanks).orElse("")
        + kvEventsReplayUri.map(u -> ", replay=" + u).orElse("") + '}';
  }

  /**
   * The inference engine behind an endpoint, as configured or as its {@code /metrics} names tell.
   */
  public enum Engine {
    /** vLLM: {@code vllm:} metrics; sleep mode at {@code /sleep}, {@code /wake_up}. */
    VLLM,
    /** SGLang: {@code sglang:} metrics; memory release at {@code /release_memory_occupation}. */
    SGLANG,
    /**
     * Not said: an endpoint configured so is told from the metric names of its scrapes, and an
     * exposition with no known engine family (or both engines') reads as this.
     */
    UNKNOWN
  }

  /** Builds a {@link ReplicaEndpoint}. Not thread-safe. */
  public static final class Builder {
    private final String id;
    private final URI baseUri;
    private Engine engine = Engine.UNKNOWN;
    private final Set<String> models = new LinkedHashSet<>();
    private @Nullable URI kvEventsUri;
    private @Nullable URI kvEventsReplayUri;
    private int dataParallelRanks = 1;

    private Builder(String id, URI baseUri) {
      Checks.notBlank(id, "id");
      if (id.length() > Replica.MAX_ID_LENGTH) {
        throw new IllegalArgumentException(
            "id: " + id.length() + " characters (expected: <= " + Replica.MAX_ID_LENGTH + ")");
      }
      this.id = id;
      this.baseUri = checkBase(Objects.requireNonNull(baseUri, "baseUri"));
    }

    private static URI checkBase(URI uri) {
      String scheme = uri.getScheme();
      if (!uri.isAbsolute() || !("http".equalsIgnoreCase(scheme) || "https".equalsIgnoreCase(scheme))
          || uri.getHost() == null || uri.getRawQuery() != null || uri.getRawFragment() != null) {
        throw new IllegalArgumentException("baseUri: " + uri
            + " (expected: an absolute http or https URI with a host, no query, no fragment)");
      }
      String s = uri.toString();
      return s.endsWith("/") ? URI.create(s.substring(0, s.length() - 1)) : uri;
    }

    /** Sets the engine ({@link Engine#UNKNOWN} by default). */
    public Builder engine(Engine engine) {
      this.engine = Objects.requireNonNull(engine, "engine");
      return this;
    }

    /** Adds a model the replica serves. */
    public Builder model(String model) {
      models.add(Checks.notBlank(model, "model"));
      return this;
    }

    /** Replaces the models the replica serves. */
    public Builder models(Iterable<String> models) {
      Objects.requireNonNull(models, "models");
      this.models.clear();
      models.forEach(this::model);
      return this;
    }

    /**
     * Sets where the engine publishes KV-cache events, e.g. {@code tcp://10.0.0.7:5557}.
     *
     * @throws IllegalArgumentException if the URI is not absolute
     */
    public Builder kvEventsUri(URI uri) {
      Objects.requireNonNull(uri, "kvEventsUri");
      if (!uri.isAbsolute()) {
        throw new IllegalArgumentException("kvEventsUri: " + uri + " (expected: an absolute URI)");
      }
      this.kvEventsUri = uri;
      return this;
    }

    /**
     * Sets where the engine answers KV-event replay requests, e.g. {@code tcp://10.0.0.7:5558}.
     *
     * @throws IllegalArgumentException if the URI is not absolute
     */
    public Builder kvEventsReplayUri(URI uri) {
      Objects.requireNonNull(uri, "kvEventsReplayUri");
      if (!uri.isAbsolute()) {
        throw new IllegalArgumentException(
            "kvEventsReplayUri: " + uri + " (expected: an absolute URI)");
      }
      this.kvEventsReplayUri = uri;
      return this;
    }

    /** Sets the data-parallel ranks publishing KV events; must be {@code > 0}. */
    public Builder dataParallelRanks(int ranks) {
      this.dataParallelRanks = Checks.positive(ranks, "dataParallelRanks");
      return this;
    }

    /** Returns the endpoint. */
    public ReplicaEndpoint build() {
      return new ReplicaEndpoint(this);
    }
  }
}
