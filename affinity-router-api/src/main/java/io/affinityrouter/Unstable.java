package io.affinityrouter;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks an API that may still change incompatibly in a minor release, or go: young code whose
 * shape follows the engines it talks to. Everything not so marked follows semantic versioning.
 * A package so marked covers every type in it. Retained at run time so that tooling can check.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.PACKAGE, ElementType.TYPE, ElementType.METHOD, ElementType.CONSTRUCTOR,
    ElementType.FIELD})
public @interface Unstable {}
