package dev.iobound.common;

/**
 * Input rules of the iobound contract (contract/README.md), shared by every Java contender so
 * that they differ only in how they wait, never in what they accept.
 */
public final class Contract {
    public static final String PLAINTEXT = "Hello, World!";
    /** Upper bound for /delay: long enough for every plan, short enough to stop abuse. */
    public static final long MAX_DELAY_MS = 60_000;

    private Contract() {}

    /** Parses the {@code ms} query parameter of /delay: a decimal integer in 0..60000. */
    public static long delayMs(String raw) {
        if (raw == null || raw.isEmpty()) {
            throw new BadRequest("query parameter ms is required, e.g. /delay?ms=100");
        }
        if (raw.length() > 6) {
            throw new BadRequest("ms must be an integer between 0 and " + MAX_DELAY_MS);
        }
        long value = 0;
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c < '0' || c > '9') {
                throw new BadRequest("ms must be an integer between 0 and " + MAX_DELAY_MS);
            }
            value = value * 10 + (c - '0');
        }
        if (value > MAX_DELAY_MS) {
            throw new BadRequest("ms must be an integer between 0 and " + MAX_DELAY_MS);
        }
        return value;
    }
}
