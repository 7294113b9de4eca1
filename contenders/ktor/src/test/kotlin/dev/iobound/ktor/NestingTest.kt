package dev.iobound.ktor

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

class NestingTest {
    @Test
    fun countsTheDeepestLevelOfArraysAndObjects() {
        assertEquals(0, KtorApp.nesting("\"text\""))
        assertEquals(1, KtorApp.nesting("""{"text":"a"}"""))
        assertEquals(3, KtorApp.nesting("""{"a":[{"b":1}],"c":[]}"""))
        assertEquals(
            10_001,
            KtorApp.nesting("{\"text\":" + "[".repeat(10_000) + "]".repeat(10_000) + "}"),
        )
    }

    @Test
    fun bracketsInsideStringsDoNotCount() {
        assertEquals(1, KtorApp.nesting("""{"text":"[[[[{{{{"}"""))
        // An escaped quote does not end the string.
        assertEquals(1, KtorApp.nesting("""{"text":"\"[[[["}"""))
    }
}
