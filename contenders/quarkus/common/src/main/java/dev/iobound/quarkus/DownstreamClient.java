package dev.iobound.quarkus;

import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.rest.client.inject.RegisterRestClient;
import org.jboss.resteasy.reactive.RestQuery;

/**
 * The downstream service through Quarkus's REST client (on Vert.x's HTTP client: keep-alive, a
 * connection pool). Where it is and its timeouts: quarkus.rest-client.downstream.* in
 * META-INF/microprofile-config.properties, from the harness's environment.
 */
@RegisterRestClient(configKey = "downstream")
@Path("/value")
public interface DownstreamClient {
  /** For the event loop: completes on the event loop without blocking it. */
  @GET
  Uni<Response> valueAsync(@RestQuery String key);

  /** For worker and virtual threads: blocks the calling thread. */
  @GET
  Response value(@RestQuery String key);
}
