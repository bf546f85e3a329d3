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
 * depends only on the seed and the session's index (a kind's system prompt on the seed and the
 * kind), so every strategy sees the same sessions; only the timing of later turns depends on how fast
 * the fleet answers. Stateless and thread-safe.
 *
 * <p>Presets: {@link Config#defaults} ({@code agents}; {@code agents-hot} is it with a hot share of
 * 0.6), and the long-context ones, {@link Config#agentsLong} and {@link Config#agentsLongPressure},
 * whose sessions each draw a final context and grow to it turn by turn.
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
   * @param minSystemPromptTokens fewest tokens of a kind's system prompt
   * @param maxSystemPromptTokens most tokens of a kind's system prompt; each kind draws its size
   *     uniformly in the range (no draw when both are equal)
   * @param taskTokens tokens of a session's first user message
   * @param minTurns fewest turns in a session
   * @param maxTurns most turns in a session
   * @param minToolTokens smallest tool output
   * @param maxToolTokens largest tool output (unused with a context target: tool outputs are then
   *     sized to reach it)
   * @param minAnswerTokens shortest model answer
   * @param maxAnswerTokens longest model answer
   * @param minContextTokens {@code 0} for no context target, else the smallest final context: each
   *     session draws its last turn's prompt (system prompt included) uniformly in
   *     {@code [minContextTokens, maxContextTokens]} and its tool outputs are sized to land on it
   * @param maxContextTokens the largest final context ({@code 0} with no target)
   * @param meanThinkMillis mean think/tool time between turns, exponential (used when
   *     {@code maxThinkMillis} is 0)
   * @param minThinkMillis shortest think time when think times are uniform
   * @param maxThinkMillis {@code 0} for exponential think times, else the longest: think times are
   *     then uniform in {@code [minThinkMillis, maxThinkMillis]}
   * @param seed the random seed
   */
  public record Config(int sessions, double sessionsPerSecond, int kinds, double hotShare,
      int minSystemPromptTokens, int maxSystemPromptTokens, int taskTokens, int minTurns,
      int maxTurns, int minToolTokens, int maxToolTokens, int minAnswerTokens, int maxAnswerTokens,
      int minContextTokens, int maxContextTokens, double meanThinkMillis, double minThinkMillis,
      double maxThinkMillis, long seed) {

    /**
     * Validates the options.
     *
     * @throws IllegalArgumentException if a count or size is not positive, a range is inverted, or
     *     a context target is too small for its turns to fit
     */
    public Config {
      positive(sessions, "sessions");
      positive(kinds, "kinds");
      positive(minSystemPromptTokens, "minSystemPromptTokens");
      positive(taskTokens, "taskTokens");
      positive(minTurns, "minTurns");
      positive(minToolTokens, "minToolTokens");
      positive(minAnswerTokens, "minAnswerTokens");
      range(minSystemPromptTokens, maxSystemPromptTokens, "maxSystemPromptTokens");
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
      if (!(minThinkMillis >= 0 && maxThinkMillis >= 0) || Double.isInfinite(maxThinkMillis)) {
        throw new IllegalArgumentException("thinkMillis: " + minThinkMillis + ".."
            + maxThinkMillis + " (expected: >= 0 and finite)");
      }
      if (maxThinkMillis > 0 && maxThinkMillis < minThinkMillis) {
        throw new IllegalArgumentException(
            "maxThinkMillis: " + maxThinkMillis + " (expected: >= " + minThinkMillis + ")");
      }
      if (minContextTokens < 0) {
        throw new IllegalArgumentException(
            "minContextTokens: " + minContextTokens + " (expected: >= 0)");
      }
      if (minContextTokens > 0 || maxContextTokens != 0) {
        range(minContextTokens, maxContextTokens, "maxContextTokens");
        // the smallest target must leave every step room for the longest answer and a tool output
        long fits = (long) maxSystemPromptTokens + taskTokens
            + (long) (maxTurns - 1) * (maxAnswerTokens + minToolTokens);
        if (minContextTokens < fits) {
          throw new IllegalArgumentException("minContextTokens: " + minContextTokens
              + " (expected: >= maxSystemPromptTokens + taskTokens + (maxTurns - 1) x "
              + "(maxAnswerTokens + minToolTokens) = " + fits + ")");
        }
      }
    }

    /**
     * The options without a context target, one system prompt size and exponential think times
     * (the {@code agents} workloads' form).
     */
    public Config(int sessions, double sessionsPerSecond, int kinds, double hotShare,
        int systemPromptTokens, int taskTokens, int minTurns, int maxTurns, int minToolTokens,
        int maxToolTokens, int minAnswerTokens, int maxAnswerTokens, double meanThinkMillis,
        long seed) {
      this(sessions, sessionsPerSecond, kinds, hotShare, systemPromptTokens, systemPromptTokens,
          taskTokens, minTurns, maxTurns, minToolTokens, maxToolTokens, minAnswerTokens,
          maxAnswerTokens, 0, 0, meanThinkMillis, 0, 0, seed);
    }

    /**
     * Defaults ({@code agents}): 800 sessions of 8 kinds, a 4,000-token system prompt, a 300-token
     * task, 4–16 turns, tool outputs of 100–1,500 tokens, answers of 20–400 tokens, 2 s mean think
     * time (exponential), 4 sessions starting per second (to be rescaled to the target load).
     */
    public static Config defaults(long seed) {
      return new Config(800, 4.0, 8, 0.0, 4000, 300, 4, 16, 100, 1500, 20, 400, 2000, seed);
    }

    /**
     * Long-context agents on a hot prompt family ({@code agents-long-hot}; {@code agents-long} is the
     * same with kinds drawn uniformly): {@value #LONG_SESSIONS} sessions of 8 kinds, 60% of
     * them on kind 0 (the hot prompt family, as {@code agents-hot}), system prompts of 3,000–10,000
     * tokens (one size per kind), a 300-token task, 20–60 turns growing to a final context of
     * 30,000–70,000 tokens (answers of 30–250 tokens, tool outputs of at least 50 sized to reach it),
     * think times uniform in 2–12 s (mean 7 s), 1 session starting per second (to be rescaled).
     */
    public static Config agentsLong(long seed) {
      return new Config(LONG_SESSIONS, 1.0, 8, 0.6, 3000, 10_000, 300, 20, 60, 50, 50, 30, 250,
          30_000, 70_000, 0, 2000, 12_000, seed);
    }

    /**
     * Long-context agents whose contexts do not fit in the fleet's KV
     * ({@code agents-long-pressure}): {@value #PRESSURE_SESSIONS} sessions of 16 kinds, 30% of them
     * on kind 0, system prompts of 3,000–10,000 tokens, a 4,000-token task (the task and the files it
     * names), 20–30 turns growing to 60,000–70,000 tokens, answers of 15–40 tokens (tool calls),
     * think times uniform in 10–12 s, 1 session starting per second (to be rescaled).
     *
     * <p>The contexts the active sessions hold at once come to about {@code request rate × turns ×
     * think time × mean context / turns}: at 50 requests per second they hold more than twice the
     * KV of the default fleet (8 replicas of 67,659 16-token blocks, 8.66M tokens; see
     * {@code AgentLongPresetsTest}), and at the router's capacity on it about the fleet's KV, so
     * every strategy recomputes evicted contexts well before its queues are long.
     */
    public static Config agentsLongPressure(long seed) {
      return new Config(PRESSURE_SESSIONS, 1.0, 16, 0.3, 3000, 10_000, 4000, 20, 30, 50, 50, 15,
          40, 60_000, 70_000, 0, 10_000, 12_000, seed);
    }

    /** Returns a copy with another session count. */
    public Config withSessions(int n) {
      return new Config(n, sessionsPerSecond, kinds, hotShare, minSystemPromptTokens,
          maxSystemPromptTokens, taskTokens, minTurns, maxTurns, minToolTokens, maxToolTokens,
          minAnswerTokens, maxAnswerTokens, minContextTokens, maxContextTokens, meanThinkMillis,
          minThinkMillis, maxThinkMillis, seed);
    }

    /** Returns a copy with another session start rate. */
    public Config withSessionsPerSecond(double rate) {
      return new Config(sessions, rate, kinds, hotShare, minSystemPromptTokens,
          maxSystemPromptTokens, taskTokens, minTurns, maxTurns, minToolTokens, maxToolTokens,
          minAnswerTokens, maxAnswerTokens, minContextTokens, maxContextTokens, meanThinkMillis,
          minThinkMillis, maxThinkMillis, seed);
    }

    /** Returns a copy with another hot share. */
    public Config withHotShare(double share) {
      return new Config(sessions, sessionsPerSecond, kinds, share, minSystemPromptTokens,
          maxSystemPromptTokens, taskTokens, minTurns, maxTurns, minToolTokens, maxToolTokens,
          minAnswerTokens, maxAnswerTokens, minContextTokens, maxContextTokens, meanThinkMillis,
          minThinkMillis, maxThinkMillis, seed);
    }

    /** Whether sessions grow to a drawn final context. */
    public boolean hasContextTarget() {
      return maxContextTokens > 0;
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

  /** Default sessions of {@link Config#agentsLong}. */
  public static final int LONG_SESSIONS = 400;
  /** Default sessions of {@link Config#agentsLongPressure}. */
  public static final int PRESSURE_SESSIONS = 800;

  private AgentSessionGenerator() {}

  /** Generates the workload. */
  public static Workload generate(Config c, String name) {
    int[] systemPrompt = systemPrompts(c);
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
      int[] tokens = {systemPrompt[kind], c.taskTokens()};
      // with a target, what the steps between turns still have to add to the context
      int growth = c.hasContextTarget()
          ? between(r, c.minContextTokens(), c.maxContextTokens()) - tokens[0] - tokens[1] : 0;
      SimRequest previous = null;
      String session = "agent-" + s;
      for (int turn = 0; turn < turns; turn++) {
        int answer = between(r, c.minAnswerTokens(), c.maxAnswerTokens());
        long delay = turn == 0 ? Math.round(t * 1e9) : thinkNanos(c, r);
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
          int tool;
          if (c.hasContextTarget()) {
            tool = toolToTarget(c, r, growth, turns - 1 - turn, answer);
            growth -= answer + tool;
          } else {
            tool = between(r, c.minToolTokens(), c.maxToolTokens());
          }
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

  /** Each kind's system prompt size, from a stream of its own so sessions' draws are unchanged. */
  private static int[] systemPrompts(Config c) {
    int[] out = new int[c.kinds()];
    for (int k = 0; k < out.length; k++) {
      out[k] = c.minSystemPromptTokens() == c.maxSystemPromptTokens() ? c.minSystemPromptTokens()
          : between(new SplittableRandom(SegmentKeys.mix(~c.seed() * 37 + k)),
              c.minSystemPromptTokens(), c.maxSystemPromptTokens());
    }
    return out;
  }

  private static long thinkNanos(Config c, SplittableRandom r) {
    if (c.maxThinkMillis() > 0) {
      return Math.round((c.minThinkMillis()
          + r.nextDouble() * (c.maxThinkMillis() - c.minThinkMillis())) * 1e6);
    }
    return Math.round(-Math.log(1 - r.nextDouble()) * c.meanThinkMillis() * 1e6);
  }

  /**
   * A tool output on the way to the session's final context: {@code growth} tokens remain to add
   * over {@code steps} steps (this one included), each an answer and a tool output. The step takes
   * its share of what remains, jittered by a factor uniform in [0.5, 1.5), keeping room for the
   * steps after it (each at most the longest answer and the smallest tool output); the last step
   * takes exactly what remains.
   */
  private static int toolToTarget(Config c, SplittableRandom r, int growth, int steps,
      int answer) {
    if (steps == 1) {
      return growth - answer;
    }
    int reserve = (steps - 1) * (c.maxAnswerTokens() + c.minToolTokens());
    int share = (int) Math.round((double) growth / steps * (0.5 + r.nextDouble()));
    return Math.max(c.minToolTokens(), Math.min(share - answer, growth - answer - reserve));
  }

  private static int between(SplittableRandom r, int min, int max) {
    return min == max ? min : min + r.nextInt(max - min + 1);
  }
}
