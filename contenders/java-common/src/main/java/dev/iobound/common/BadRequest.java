package dev.iobound.common;

/** Invalid client input; every contender maps it to 400 with the message as a text body. */
public final class BadRequest extends RuntimeException {
  public BadRequest(String message) {
    super(message);
  }
}
