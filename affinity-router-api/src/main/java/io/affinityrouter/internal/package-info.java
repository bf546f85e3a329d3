/**
 * Not API: helpers the library's own modules share. They may change or go in any release; code
 * outside the library must not use them.
 *
 * <p>Null-marked: no parameter accepts {@code null} and no method returns it.
 */
@NullMarked
package io.affinityrouter.internal;

import org.jspecify.annotations.NullMarked;
