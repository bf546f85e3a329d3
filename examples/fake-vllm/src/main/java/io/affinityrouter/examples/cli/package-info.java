/** Command-line flag parsing shared by the examples' entry points. */
package io.affinityrouter.examples.cli;
