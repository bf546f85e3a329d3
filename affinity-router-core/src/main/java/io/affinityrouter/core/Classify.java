package io.affinityrouter.core;

import io.affinityrouter.ModelState;
import io.affinityrouter.PromptKind;
import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaHealth;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.ReplicaFilter;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The first stage of {@code select}: what the request is (its prompt's block hashes, its session
 * key) and which replicas can take it (health, the model awake, the filter plugins, the in-flight
 * limits). Thread-safe; per-decision state lives in the {@link Selection}.
 */
final class Classify {
  private final LoadTracker tracker;
  private final BlockHasher hasher;
  private final Limits limits;
  private final ReplicaFilter[] filters;
  private final Listeners listeners;
  private final boolean recordLatest; // a hold queue re-offers against the newest snapshots

  Classify(LoadTracker tracker, BlockHasher hasher, Limits limits, List<ReplicaFilter> filters,
      Listeners listeners, boolean recordLatest) {
    this.tracker = tracker;
    this.hasher = hasher;
    this.limits = limits;
    this.filters = filters.toArray(new ReplicaFilter[0]);
    this.listeners = listeners;
    this.recordLatest = recordLatest;
  }

  /**
   * Sets every replica's status and state, and the prompt's hashes.
   *
   * @throws IllegalArgumentException if two replicas share an id
   */
  void run(Selection sel, Selection.Scratch s) {
    RoutingRequest request = sel.request;
    List<Replica> replicas = sel.replicas;
    long epoch = ++s.epoch;
    Set<String> overflowIds = null;
    long now = tracker.nowMillis();
    for (int i = 0; i < sel.size; i++) {
      Replica r = replicas.get(i);
      ReplicaState state = tracker.used(r.id(), now);
      if (recordLatest) {
        state.seen(r);
      }
      int ord = state.ordinal();
      if (ord >= 0) {
        if (s.seenEpoch[ord] == epoch) {
          throw new IllegalArgumentException("replicas: duplicate id " + r.id());
        }
        s.seenEpoch[ord] = epoch;
      } else {
        if (overflowIds == null) {
          overflowIds = new HashSet<>();
        }
        if (!overflowIds.add(r.id())) {
          throw new IllegalArgumentException("replicas: duplicate id " + r.id());
        }
      }
      s.states[i] = state;
      s.status[i] = status(request, r, sel, i);
    }
    tracker.maybeSweep(now);
    if (request.promptKind() == PromptKind.BLOCK_HASHES) {
      sel.hashes = request.promptBlockHashes();
      sel.blocks = Math.min(sel.hashes.length, hasher.maxPromptBlocks());
    } else {
      sel.blocks = hasher.hash(request, s.hashes);
    }
  }

  /** The session's binding key, or null for a request without a session. */
  static @Nullable BindingKey key(RoutingRequest request) {
    if (request.sessionId().isEmpty()) {
      return null;
    }
    return new BindingKey(request.model().orElse(""), request.tenant().orElse(""),
        request.sessionId().get());
  }

  private byte status(RoutingRequest request, Replica r, Selection sel, int i) {
    if (r.health() == ReplicaHealth.UNHEALTHY) {
      return Selection.UNHEALTHY;
    }
    ModelState ms = modelState(r, sel.model);
    if (ms == null) {
      return Selection.NO_MODEL;
    }
    if (ms == ModelState.SLEEPING) {
      return Selection.ASLEEP;
    }
    if (ms == ModelState.LOADING) {
      return Selection.LOADING;
    }
    for (ReplicaFilter f : filters) {
      boolean accepted;
      try {
        accepted = f.accepts(request, r);
      } catch (RuntimeException e) {
        listeners.pluginFailure(f.name(), e);
        accepted = false;
      }
      if (!accepted) {
        return Selection.FILTERED;
      }
    }
    if (!limits.fits(sel, i)) {
      return Selection.AT_LIMIT;
    }
    return r.health() == ReplicaHealth.DRAINING ? Selection.DRAINING : Selection.OK;
  }

  /** The model's state on the replica; with no model named, the most awake one it serves. */
  private static @Nullable ModelState modelState(Replica r, @Nullable String model) {
    Map<String, ModelState> models = r.models();
    if (models.isEmpty()) {
      return ModelState.ACTIVE;
    }
    if (model != null) {
      return models.get(model);
    }
    ModelState best = null;
    for (ModelState ms : models.values()) {
      if (best == null || ms.ordinal() < best.ordinal()) {
        best = ms;
      }
    }
    return best;
  }
}
