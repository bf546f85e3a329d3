/**
 * Token ids for chat text, in process: {@link io.affinityrouter.core.tokenizer.InProcessTokenizer}
 * renders a model's HuggingFace chat template and encodes with its {@code tokenizer.json}, as
 * vLLM's {@code POST /tokenize} does. Young: its API may change between minor versions.
 */
@NullMarked
package io.affinityrouter.core.tokenizer;

import org.jspecify.annotations.NullMarked;
