package io.affinityrouter;

import io.affinityrouter.internal.Checks;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.jspecify.annotations.Nullable;

/**
 * One inference server (a vLLM or SGLang engine) as the gateway currently sees it: identity, the
 * models it hosts and their state, health, when it became ready, its last load snapshot, and
 * optional per-replica limits that override the router's defaults.
 *
 * <p>Immutable and thread-safe. A gateway rebuilds its {@code List<Replica>} when discovery or a
 * scrape changes something and passes the current list to every {@code select}; the router keys
 * all of its own state (in-flight work, prefix index, bindings) by {@link #id()}.
 */
public final class Replica {
  /** The longest replica id accepted, in characters. */
  public static final int MAX_ID_LENGTH = 256;

  private final String id;
  private final String address;
  private final Map<String, ModelState> models;
  private final ReplicaHealth health;
  private final Instant readySince;
  private final ReplicaLoad load;
  private final OptionalInt maxInFlightRequests;
  private final OptionalLong maxInFlightTokens;

  private Replica(Builder b) {
    this.id = b.id;
    this.address = b.address == null ? b.id : b.address;
    this.models = Map.copyOf(b.models);
    this.health = b.health;
    this.readySince = b.readySince;
    this.load = b.load;
    this.maxInFlightRequests = b.maxInFlightRequests;
    this.maxInFlightTokens = b.maxInFlightTokens;
  }

  /**
   * Returns a builder for a replica with the given id: healthy, ready since the epoch (fully ramped
   * up), hosting any model, with an unknown load and the router's default limits.
   *
   * @throws IllegalArgumentException if {@code id} is blank or longer than {@value #MAX_ID_LENGTH}
   */
  public static Builder builder(String id) {
    return new Builder(id);
  }

  /** Shorthand for {@code builder(id).build()}. */
  public static Replica of(String id) {
    return builder(id).build();
  }

  /** The replica's unique id, stable across restarts of the gateway (e.g. pod name). */
  public String id() {
    return id;
  }

  /** Where to send requests (e.g. {@code http://10.0.0.7:8000}); the id when not set. */
  public String address() {
    return address;
  }

  /**
   * The models hosted and their states. Empty means the replica serves any model asked of it (a
   * single-model fleet where the gateway does not track model names).
   */
  public Map<String, ModelState> models() {
    return models;
  }

  /**
   * The state of {@code model} on this replica: empty if it does not host the model. A replica
   * with no {@link #models()} reports every model {@link ModelState#ACTIVE}.
   */
  public Optional<ModelState> modelState(String model) {
    if (models.isEmpty()) {
      return Optional.of(ModelState.ACTIVE);
    }
    return Optional.ofNullable(models.get(model));
  }

  /** Health as the gateway's health checks see it. */
  public ReplicaHealth health() {
    return health;
  }

  /** When the replica became ready; the router ramps new replicas' share of traffic up from here. */
  public Instant readySince() {
    return readySince;
  }

  /** The last load snapshot. */
  public ReplicaLoad load() {
    return load;
  }

  /** This replica's in-flight request limit, overriding the router's default when present. */
  public OptionalInt maxInFlightRequests() {
    return maxInFlightRequests;
  }

  /** This replica's in-flight token limit, overriding the router's default when present. */
  public OptionalLong maxInFlightTokens() {
    return maxInFlightTokens;
  }

  /** Returns a builder initialised with this replica's fields. */
  public Builder toBuilder() {
    Builder b = new Builder(id).address(address).models(models).health(health)
        .readySince(readySince).load(load);
    maxInFlightRequests.ifPresent(b::maxInFlightRequests);
    maxInFlightTokens.ifPresent(b::maxInFlightTokens);
    return b;
  }

  /** Returns a copy with another load snapshot. */
  public Replica withLoad(ReplicaLoad load) {
    return toBuilder().load(load).build();
  }

  /** Returns a copy with another health. */
  public Replica withHealth(ReplicaHealth health) {
    return toBuilder().health(health).build();
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof Replica)) {
      return false;
    }
    Replica that = (Replica) o;
    return id.equals(that.id) && address.equals(that.address) && models.equals(that.models)
        && health == that.health && readySince.equals(that.readySince) && load.equals(that.load)
        && maxInFlightRequests.equals(that.maxInFlightRequests)
        && maxInFlightTokens.equals(that.maxInFlightTokens);
  }

  @Override
  public int hashCode() {
    return Objects.hash(id, address, models, health, readySince, load);
  }

  @Override
  public String toString() {
    return "Replica{" + id + ", " + health + (models.isEmpty() ? "" : ", models=" + models)
        + ", " + load + '}';
  }

  /** Builds a {@link Replica}. Not thread-safe. */
  public static final class Builder {
    private final String id;
    private @Nullable String address;
    private final Map<String, ModelState> models = new LinkedHashMap<>();
    private ReplicaHealth health = ReplicaHealth.HEALTHY;
    private Instant readySince = Instant.EPOCH;
    private ReplicaLoad load = ReplicaLoad.UNKNOWN;
    private OptionalInt maxInFlightRequests = OptionalInt.empty();
    private OptionalLong maxInFlightTokens = OptionalLong.empty();

    private Builder(String id) {
      Checks.notBlank(id, "id");
      if (id.length() > MAX_ID_LENGTH) {
        throw new IllegalArgumentException(
            "id: " + id.length() + " characters (expected: <= " + MAX_ID_LENGTH + ")");
      }
      this.id = id;
    }

    /** Sets the address requests are sent to. */
    public Builder address(String address) {
      this.address = Checks.notBlank(address, "address");
      return this;
    }

    /** Adds (or replaces) one hosted model and its state. */
    public Builder model(String model, ModelState state) {
      models.put(Checks.notBlank(model, "model"), Objects.requireNonNull(state, "state"));
      return this;
    }

    /** Replaces the hosted models. */
    public Builder models(Map<String, ModelState> models) {
      Objects.requireNonNull(models, "models");
      models.forEach((model, state) -> { // every entry checked before any replaces the old ones
        Checks.notBlank(model, "model");
        Objects.requireNonNull(state, "state");
      });
      this.models.clear();
      this.models.putAll(models);
      return this;
    }

    /** Sets the health. */
    public Builder health(ReplicaHealth health) {
      this.health = Objects.requireNonNull(health, "health");
      return this;
    }

    /** Sets when the replica became ready (for the traffic ramp of new replicas). */
    public Builder readySince(Instant readySince) {
      this.readySince = Objects.requireNonNull(readySince, "readySince");
      return this;
    }

    /** Sets the load snapshot. */
    public Builder load(ReplicaLoad load) {
      this.load = Objects.requireNonNull(load, "load");
      return this;
    }

    /** Overrides the router's in-flight request limit for this replica; must be {@code > 0}. */
    public Builder maxInFlightRequests(int limit) {
      if (limit <= 0) {
        throw new IllegalArgumentException("maxInFlightRequests: " + limit + " (expected: > 0)");
      }
      this.maxInFlightRequests = OptionalInt.of(limit);
      return this;
    }

    /** Overrides the router's in-flight token limit for this replica; must be {@code > 0}. */
    public Builder maxInFlightTokens(long limit) {
      if (limit <= 0) {
        throw new IllegalArgumentException("maxInFlightTokens: " + limit + " (expected: > 0)");
      }
      this.maxInFlightTokens = OptionalLong.of(limit);
      return this;
    }

    /** Returns the replica. */
    public Replica build() {
      return new Replica(this);
    }
  }
}
