/** Reporters: the terminal table, CSV, and HTML with inline SVG charts. */
@NullMarked
package io.affinityrouter.examples.simulator.report;

import org.jspecify.annotations.NullMarked;
