/**
 * The OpenAI-compatible completion request model shared by the fake engine and the gateway: which
 * API, model, the prompt as one text, streaming and output limit.
 */
package io.affinityrouter.examples.openai;
