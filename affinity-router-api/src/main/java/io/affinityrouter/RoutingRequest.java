package io.affinityrouter;

import io.affinityrouter.internal.Checks;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What the router needs to know of one inference request: model, session, tenant, the prompt (as
 * token ids, text, or block hashes computed earlier), an optional output-length hint, and how many
 * times the client has sent it before.
 *
 * <p>The prompt is used only to compute chained block hashes; the router never stores or logs prompt
 * content, and {@link #toString()} shows only sizes. Immutable and thread-safe. The token array given
 * to {@link Builder#promptTokens(int[])} is copied; the arrays returned by {@link #promptTokens()} and
 * {@link #promptBlockHashes()} are the request's own and must not be modified.
 */
public final class RoutingRequest {
  /** The longest session id accepted, in UTF-8 bytes. */
  public static final int MAX_SESSION_ID_BYTES = 256;

  /**
   * Characters per token assumed for text prompts when estimating their size in tokens: {@value}
   * (the usual figure for English text with BPE tokenizers).
   */
  public static final int CHARS_PER_TOKEN_ESTIMATE = 4;

  /** The header the OpenAI and Anthropic SDKs number a request's resends with: {@value}. */
  public static final String RETRY_COUNT_HEADER = "x-stainless-retry-count";
  private static final int MAX_RETRY_DIGITS = 9;

  private final Optional<String> model;
  private final Optional<String> sessionId;
  private final Optional<String> tenant;
  private final PromptKind promptKind;
  private final int @Nullable [] promptTokens; // the one of the three the kind names is set
  private final @Nullable String promptText;
  private final long @Nullable [] promptBlockHashes;
  private final int promptTokenCount;
  private final int expectedOutputTokens;
  private final int retries;

  private RoutingRequest(Builder b, PromptKind kind) {
    this.model = Optional.ofNullable(b.model);
    this.sessionId = Optional.ofNullable(b.sessionId);
    this.tenant = Optional.ofNullable(b.tenant);
    this.promptKind = kind;
    this.promptTokens = b.promptTokens;
    this.promptText = b.promptText;
    this.promptBlockHashes = b.promptBlockHashes;
    this.promptTokenCount = b.promptTokenCount;
    this.expectedOutputTokens = b.expectedOutputTokens;
    this.retries = b.retries;
  }

  /** Returns an empty builder. */
  public static Builder builder() {
    return new Builder();
  }

  /** The model asked for; empty means "whatever the replicas serve". */
  public Optional<String> model() {
    return model;
  }

  /** The caller's session id; empty means the request is not pinned. */
  public Optional<String> sessionId() {
    return sessionId;
  }

  /** The tenant; it salts the prefix hashes so two tenants never share prefix locality. */
  public Optional<String> tenant() {
    return tenant;
  }

  /** How the prompt is carried. */
  public PromptKind promptKind() {
    return promptKind;
  }

  /**
   * The prompt's token ids (not a copy: do not modify).
   *
   * @throws IllegalStateException if {@link #promptKind()} is not {@link PromptKind#TOKENS}
   */
  public int[] promptTokens() {
    requireKind(PromptKind.TOKENS);
    return Objects.requireNonNull(promptTokens);
  }

  /**
   * The prompt's text.
   *
   * @throws IllegalStateException if {@link #promptKind()} is not {@link PromptKind#TEXT}
   */
  public String promptText() {
    requireKind(PromptKind.TEXT);
    return Objects.requireNonNull(promptText);
  }

  /**
   * The prompt's chained block hashes (not a copy: do not modify).
   *
   * @throws IllegalStateException if {@link #promptKind()} is not {@link PromptKind#BLOCK_HASHES}
   */
  public long[] promptBlockHashes() {
    requireKind(PromptKind.BLOCK_HASHES);
    return Objects.requireNonNull(promptBlockHashes);
  }

  /**
   * The prompt's length in tokens: exact for token prompts, estimated for text prompts (characters
   * divided by {@value #CHARS_PER_TOKEN_ESTIMATE}, rounded up), as given for block-hash prompts.
   */
  public int promptTokenCount() {
    return promptTokenCount;
  }

  /** The caller's estimate of output tokens; {@code 0} when unknown (the router then learns one). */
  public int expectedOutputTokens() {
    return expectedOutputTokens;
  }

  /**
   * How many times the client sent this request before, refused ({@code 0}: its first send). Past
   * capacity, the router admits a tenant's first sends ahead of its resends.
   */
  public int retries() {
    return retries;
  }

  /**
   * Returns a copy whose prompt is the given block hashes instead of its tokens or text (used by
   * {@link Router#prehash(RoutingRequest)}); model, session, tenant, hint and retries are kept.
   */
  public RoutingRequest withBlockHashes(long[] blockHashes) {
    Builder b = toBuilderWithoutPrompt();
    b.promptBlockHashes(blockHashes, promptTokenCount);
    return b.build();
  }

  private Builder toBuilderWithoutPrompt() {
    Builder b = new Builder();
    b.model = model.orElse(null);
    b.sessionId = sessionId.orElse(null);
    b.tenant = tenant.orElse(null);
    b.expectedOutputTokens = expectedOutputTokens;
    b.retries = retries;
    return b;
  }

  private void requireKind(PromptKind kind) {
    if (promptKind != kind) {
      throw new IllegalStateException("prompt is " + promptKind + ", not " + kind);
    }
  }

  /** Shows model, session, tenant and the prompt's kind and size; never prompt content. */
  @Override
  public String toString() {
    return "RoutingRequest{model=" + model.orElse("-") + ", session=" + sessionId.orElse("-")
        + ", tenant=" + tenant.orElse("-") + ", prompt=" + promptKind + "/" + promptTokenCount
        + " tokens, expectedOutput=" + expectedOutputTokens + ", retries=" + retries + '}';
  }

  /** Builds a {@link RoutingRequest}. Not thread-safe. */
  public static final class Builder {
    private @Nullable String model;
    private @Nullable String sessionId;
    private @Nullable String tenant;
    private @Nullable PromptKind promptKind;
    private int @Nullable [] promptTokens;
    private @Nullable String promptText;
    private long @Nullable [] promptBlockHashes;
    private int promptTokenCount;
    private int expectedOutputTokens;
    private int retries;

    private Builder() {}

    /** Sets the model; must not be blank. */
    public Builder model(String model) {
      this.model = Checks.notBlank(model, "model");
      return this;
    }

    /**
     * Sets the session id; must not be blank nor longer than {@value #MAX_SESSION_ID_BYTES} bytes in
     * UTF-8.
     */
    public Builder sessionId(String sessionId) {
      Checks.notBlank(sessionId, "sessionId");
      // A UTF-8 encoding is at least as long as the char count: test cheaply before encoding.
      if (sessionId.length() > MAX_SESSION_ID_BYTES
          || (sessionId.length() * 3 > MAX_SESSION_ID_BYTES
          && sessionId.getBytes(StandardCharsets.UTF_8).length > MAX_SESSION_ID_BYTES)) {
        throw new IllegalArgumentException("sessionId: "
            + sessionId.getBytes(StandardCharsets.UTF_8).length + " bytes (expected: <= "
            + MAX_SESSION_ID_BYTES + " bytes in UTF-8)");
      }
      this.sessionId = sessionId;
      return this;
    }

    /** Sets the tenant; must not be blank. */
    public Builder tenant(String tenant) {
      this.tenant = Checks.notBlank(tenant, "tenant");
      return this;
    }

    /** Sets the prompt as token ids (copied). Replaces any prompt set before. */
    public Builder promptTokens(int[] tokens) {
      Objects.requireNonNull(tokens, "tokens");
      clearPrompt();
      this.promptKind = PromptKind.TOKENS;
      this.promptTokens = tokens.clone();
      this.promptTokenCount = tokens.length;
      return this;
    }

    /** Sets the prompt as text. Replaces any prompt set before. */
    public Builder promptText(CharSequence text) {
      Objects.requireNonNull(text, "text");
      clearPrompt();
      this.promptKind = PromptKind.TEXT;
      this.promptText = text.toString();
      this.promptTokenCount = (int) (((long) text.length() + CHARS_PER_TOKEN_ESTIMATE - 1)
          / CHARS_PER_TOKEN_ESTIMATE);
      return this;
    }

    /**
     * Sets the prompt as block hashes computed by {@link Router#prehash(RoutingRequest)} of a router
     * with the same prefix configuration, and the prompt's length in tokens. The array is not copied.
     */
    public Builder promptBlockHashes(long[] blockHashes, int promptTokenCount) {
      Objects.requireNonNull(blockHashes, "blockHashes");
      Checks.nonNegative(promptTokenCount, "promptTokenCount");
      clearPrompt();
      this.promptKind = PromptKind.BLOCK_HASHES;
      this.promptBlockHashes = blockHashes;
      this.promptTokenCount = promptTokenCount;
      return this;
    }

    /** Sets the expected output tokens; must be {@code >= 0} ({@code 0} = unknown). */
    public Builder expectedOutputTokens(int expectedOutputTokens) {
      this.expectedOutputTokens =
          (int) Checks.nonNegative(expectedOutputTokens, "expectedOutputTokens");
      return this;
    }

    /**
     * Sets how many times the client sent this request before, refused; must be {@code >= 0}
     * ({@code 0}, the default: its first send). The OpenAI and Anthropic SDKs send it as the
     * {@code x-stainless-retry-count} header.
     */
    public Builder retries(int retries) {
      this.retries = (int) Checks.nonNegative(retries, "retries");
      return this;
    }

    /**
     * Sets {@link #retries(int)} from a {@value #RETRY_COUNT_HEADER} header's value: absent,
     * empty, or anything but up to 9 decimal digits reads as {@code 0} (the header is a client's
     * hint for the hold queue's order, never a reason to refuse its request).
     */
    public Builder retriesHeader(@Nullable CharSequence value) {
      int n = 0;
      if (value != null && value.length() <= MAX_RETRY_DIGITS) {
        for (int i = 0; i < value.length(); i++) {
          char c = value.charAt(i);
          if (c < '0' || c > '9') {
            n = 0;
            break;
          }
          n = n * 10 + (c - '0');
        }
      }
      this.retries = n;
      return this;
    }

    private void clearPrompt() {
      promptTokens = null;
      promptText = null;
      promptBlockHashes = null;
    }

    /**
     * Returns the request.
     *
     * @throws IllegalArgumentException if no prompt (tokens, text or block hashes) was set
     */
    public RoutingRequest build() {
      if (promptKind == null) {
        throw new IllegalArgumentException(
            "prompt: none (expected: promptTokens, promptText or promptBlockHashes)");
      }
      return new RoutingRequest(this, promptKind);
    }
  }
}
