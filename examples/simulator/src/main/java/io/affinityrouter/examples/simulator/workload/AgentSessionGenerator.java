package io.affinityrouter.examples.simulator.workload;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Generates agent sessions: each session is of one agent kind whose system prompt (instructions and
 * tool schemas) it shares with every other session of that kind; its first turn adds a task, and
 * every later turn repeats the whole context plus the model's previous answer and a tool's output.
 * Between turns the agent waits for its tool (think time), then sends the next turn: a closed loop.
 *
 * <p>The Mooncake tool-agent trace was not available (see the traces' README), so the shape is a
 * documented assumption; every figure is an option of {@link Config}. Content (sizes, think times)
 * depends only on the seed and the session's index, so every strategy sees the same sessions; only
 * the timing of later turns depends on how fast the fleet answers. Stateless and thread-safe.
 */
public final class AgentSessionGenerator {

  /**
   * The generator's options.
   *
   * @param sessions how many sessions start during the run
   * @param sessionsPerSecond the Poisson rate at which sessions start (set from the target load)
   * @param kinds agent kinds (each with its own system prompt)
   * @param hotShare the share of sessions of kind 0 (the hot-prefix scenario); {@code 0} draws kinds
   *     uniformly
   * @param systemPromptTokens tokens of each kind's system prompt
   * @param taskTokens tokens of a session's first user message
   * @param minTurns fewest turns in a session
   * @param maxTurns most turns in a session
   * @param minToolTokens smallest tool output
   * @param maxToolTokens largest tool output
   * @param minAnswerTokens shortest model answer
   * @param maxAnswerTokens longest model answer
   * @param meanThinkMillis mean think/tool time between turns (exponential)
   * @param seed the random seed
   */
  public record Config(int sessions, double sessionsPerSecond, int kinds, double hotShare,
      int systemPromptTokens, int taskTokens, int minTurns, int maxTurns, int minToolTokens,
      int maxToolTokens, int minAnswerTokens, int maxAnswerTokens, double meanThinkMillis,
      long seed) {

    /**
     * Validates the options.
     *
     * @throws IllegalArgumentException if a count or size is not positive, or a range is inverted
     */
    public Config {
      positive(sessions, "sessions");
      positive(kinds, "kinds");
      positive(systemPromptTokens, "systemPromptTokens");
      positive(taskTokens, "taskTokens");
      positive(minTurns, "minTurns");
      positive(minToolTokens, "minToolTokens");
      positive(minAnswerTokens, "minAnswerTokens");
      range(minTurns, maxTurns, "maxTurns");
      range(minToolTokens, maxToolTokens, "maxToolTokens");
      range(minAnswerTokens, maxAnswerTokens, "maxAnswerTokens");
      if (!(sessionsPerSecond > 0) || Double.isInfinite(sessionsPerSecond)) {
        throw new IllegalArgumentException(
            "sessionsPerSecond: " + sessionsPerSecond + " (expected: > 0 and finite)");
      }
      if (!(hotShare >= 0 && hotShare <= 1)) {
        throw new IllegalArgumentException("hotShare: " + hotShare + " (expected: in [0, 1])");
      }
      if (!(meanThinkMillis >= 0)) {
        throw new IllegalArgumentException(
            "meanThinkMillis: " + meanThinkMillis + " (expected: >= 0)");
      }
    }

    /**
     * Defaults: 800 sessions of 8 kinds, a 4,000-token system prompt, a 300-token task, 4–16 turns,
     * tool outputs of 100–1,500 tokens, answers of 20–400 tokens, 2 s mean think time, 4 sessions
     * starting per second (to be rescaled to the target load).
     */
    public static Config defaults(long seed) {
      return new Config(800, 4.0, 8, 0.0, 4000, 300, 4, 16, 100, 1500, 20, 400, 2000, seed);
    }

    /** Returns a copy with another session count. */
    public Config withSessions(int n) {
      return new Config(n, sessionsPerSecond, kinds, hotShare, systemPromptTokens, taskTokens,
          minTurns, maxTurns, minToolTokens, maxToolTokens, minAnswerTokens, maxAnswerTokens,
          meanThinkMillis, seed);
    }

    /** Returns a copy with another hot share. */
    public Config withHotShare(double share) {
      return new Config(sessions, sessionsPerSecond, kinds, share, systemPromptTokens, taskTokens,
          minTurns, maxTurns, minToolTokens, maxToolTokens, minAnswerTokens, maxAnswerTokens,
          meanThinkMillis, seed);
    }

    private static void positive(long v, String name) {
      if (v <= 0) {
        throw new IllegalArgumentException(name + ": " + v + " (expected: > 0)");
      }
    }

    private static void range(long min, long max, String name) {
      if (max < min) {
        throw new IllegalArgumentException(name + ": " + max + " (expected: >= " + min + ")");
      }
    }
  }

  private AgentSessionGenerator() {}

  /** Generates the workload. */
  public static Workload generate(Config c, String name) {
    SplittableRandom arrivals = new SplittableRandom(c.seed());
    List<SimRequest> heads = new ArrayList<>(c.sessions());
    double t = 0;
    long requestId = 0;
    for (int s = 0; s < c.sessions(); s++) {
      t += -Math.log(1 - arrivals.nextDouble()) / c.sessionsPerSecond();
      SplittableRandom r = new SplittableRandom(SegmentKeys.mix(c.seed() * 31 + s));
      int kind = c.hotShare() > 0 && r.nextDouble() < c.hotShare() ? 0 : r.nextInt(c.kinds());
      int turns = between(r, c.minTurns(), c.maxTurns());
      long[] ids = {(10L << 40) | kind, (11L << 40) | s};
      int[] tokens = {c.systemPromptTokens(), c.taskTokens()};
      SimRequest previous = null;
      String session = "agent-" + s;
      for (int turn = 0; turn < turns; turn++) {
        int answer = between(r, c.minAnswerTokens(), c.maxAnswerTokens());
        long delay = turn == 0 ? Math.round(t * 1e9)
            : Math.round(-Math.log(1 - r.nextDouble()) * c.meanThinkMillis() * 1e6);
        long answerId = turn + 1 < turns ? (12L << 40) | ((long) s << 16) | turn : -1;
        SimRequest req = new SimRequest(requestId++, session, delay, ids, tokens, answer,
            answerId);
        if (previous == null) {
          heads.add(req);
        } else {
          previous.linkNext(req);
        }
        previous = req;
        if (answerId >= 0) {
          int tool = between(r, c.minToolTokens(), c.maxToolTokens());
          ids = Arrays.copyOf(ids, ids.length + 2);
          tokens = Arrays.copyOf(tokens, tokens.length + 2);
          ids[ids.length - 2] = answerId;
          tokens[tokens.length - 2] = answer;
          ids[ids.length - 1] = (13L << 40) | ((long) s << 16) | turn;
          tokens[tokens.length - 1] = tool;
        }
      }
    }
    return new Workload(name, heads);
  }

  private static int between(SplittableRandom r, int min, int max) {
    return min == max ? min : min + r.nextInt(max - min + 1);
  }
}
