package dev.iobound.quarkus;

import dev.iobound.common.BadRequest;
import jakarta.ws.rs.core.Response;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/** Input the contract rejects is a 400 with the rule it broke, in every model. */
public final class Errors {
  @ServerExceptionMapper
  public Response badRequest(BadRequest e) {
    return Replies.text(400, e.getMessage());
  }
}
