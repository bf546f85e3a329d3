/** A small strict JSON reader and writer shared by the examples (no JSON library needed). */
package io.affinityrouter.examples.json;
