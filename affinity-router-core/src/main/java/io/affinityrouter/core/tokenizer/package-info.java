/**
 * Token ids for chat text, in process: {@link io.affinityrouter.core.tokenizer.InProcessTokenizer}
 * renders a model's HuggingFace chat template and encodes with its {@code tokenizer.json}, as
 * vLLM's {@code POST /tokenize} does.
 *
 * <p>{@link io.affinityrouter.Unstable}: this package may still change incompatibly in a minor
 * release.
 */
@NullMarked
@Unstable
package io.affinityrouter.core.tokenizer;

import io.affinityrouter.Unstable;
import org.jspecify.annotations.NullMarked;
