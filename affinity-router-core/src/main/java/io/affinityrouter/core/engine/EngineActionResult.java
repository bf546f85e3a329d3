package io.affinityrouter.core.engine;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * What an engine action ({@code /wake_up}, {@code /sleep}, {@code /is_sleeping}) came to: a value,
 * never an exception, as actions run asynchronously against servers that may be gone.
 *
 * <p>Immutable and thread-safe.
 */
public final class EngineActionResult {
  private final Status status;
  private final OptionalInt httpStatus;
  private final Optional<Boolean> sleeping;
  private final String detail;

  private EngineActionResult(Status status, OptionalInt httpStatus, Optional<Boolean> sleeping,
      String detail) {
    this.status = status;
    this.httpStatus = httpStatus;
    this.sleeping = sleeping;
    this.detail = detail;
  }

  static EngineActionResult done(int httpStatus, Optional<Boolean> sleeping) {
    return new EngineActionResult(Status.DONE, OptionalInt.of(httpStatus), sleeping, "");
  }

  static EngineActionResult of(Status status, String detail) {
    return new EngineActionResult(status, OptionalInt.empty(), Optional.empty(),
        Objects.requireNonNull(detail, "detail"));
  }

  static EngineActionResult rejected(int httpStatus, String detail) {
    return new EngineActionResult(Status.FAILED, OptionalInt.of(httpStatus), Optional.empty(),
        detail);
  }

  /** What happened. */
  public Status status() {
    return status;
  }

  /** Whether the engine answered the action with a 2xx status. */
  public boolean isDone() {
    return status == Status.DONE;
  }

  /** The HTTP status the engine answered with, if it answered. */
  public OptionalInt httpStatus() {
    return httpStatus;
  }

  /** For {@code /is_sleeping}: whether the engine said it sleeps; empty for other actions. */
  public Optional<Boolean> sleeping() {
    return sleeping;
  }

  /** Why it failed or is unsupported, for logs; empty when done. */
  public String detail() {
    return detail;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof EngineActionResult)) {
      return false;
    }
    EngineActionResult that = (EngineActionResult) o;
    return status == that.status && httpStatus.equals(that.httpStatus)
        && sleeping.equals(that.sleeping) && detail.equals(that.detail);
  }

  @Override
  public int hashCode() {
    return Objects.hash(status, httpStatus, sleeping, detail);
  }

  @Override
  public String toString() {
    return "EngineActionResult{" + status
        + (httpStatus.isPresent() ? ", http " + httpStatus.getAsInt() : "")
        + sleeping.map(s -> ", sleeping=" + s).orElse("")
        + (detail.isEmpty() ? "" : ", " + detail) + '}';
  }

  /** The kinds of outcome. */
  public enum Status {
    /** The engine answered 2xx. */
    DONE,
    /**
     * The engine has no such endpoint or mode: a vLLM server without
     * {@code VLLM_SERVER_DEV_MODE=1} (it answers 404), or SGLang asked for a sleep state or a
     * sleep mode other than {@code wait}.
     */
    UNSUPPORTED,
    /** No answer (refused, timed out, reset), or a non-2xx answer ({@link #httpStatus()}). */
    FAILED,
    /** The fleet view has no replica with that id. */
    UNKNOWN_REPLICA,
    /** The fleet view was closed before the action finished. */
    CLOSED
  }
}
