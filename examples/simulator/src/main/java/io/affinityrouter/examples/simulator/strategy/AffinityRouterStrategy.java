package io.affinityrouter.examples.simulator.strategy;

import java.util.List;

/** Placeholder until the core engine is merged: no variant of the real router yet. */
final class AffinityRouterStrategy {
  private AffinityRouterStrategy() {}

  static List<StrategyRegistry.Entry> entries() {
    return List.of();
  }
}
