/** Part of the routing engine; see {@link io.affinityrouter.core}. */
@NullMarked
package io.affinityrouter.core.binding;

import org.jspecify.annotations.NullMarked;
