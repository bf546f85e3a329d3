/** The {@code affinity-router.*} properties and the Spring Boot auto-configuration. */
@NullMarked
package io.affinityrouter.examples.gateway.config;

import org.jspecify.annotations.NullMarked;
