package dev.iobound.quarkus;

import dev.iobound.common.Contract;
import io.quarkus.arc.properties.IfBuildProperty;
import io.smallrye.common.annotation.RunOnVirtualThread;
import jakarta.inject.Inject;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Response;
import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestQuery;

/**
 * quarkus-virtual: @RunOnVirtualThread runs every handler on a new virtual thread, which unmounts
 * from its carrier while it sleeps, reads or waits for the database. The handlers are
 * BlockingWork's; only the annotation above differs from the other blocking deployment.
 */
@Path("/")
@RunOnVirtualThread
@IfBuildProperty(name = "iobound.model", stringValue = "virtual")
public class VirtualResource {
  @Inject BlockingWork work;

  @GET
  @Path("plaintext")
  public Response plaintext() {
    return Replies.text(200, Contract.PLAINTEXT);
  }

  @GET
  @Path("delay")
  public Response delay(@RestQuery String ms) throws Exception {
    return work.delay(ms);
  }

  @GET
  @Path("hash")
  public Response hash(@RestQuery String id, @RestQuery String delayMs) throws Exception {
    return work.hash(id, delayMs);
  }

  @GET
  @Path("enrich")
  public Response enrich(@RestQuery String key) {
    return work.enrich(key);
  }

  @GET
  @Path("aggregate")
  public Response aggregate(@RestQuery String keys) throws Exception {
    return work.aggregatePerRequest(keys);
  }

  @GET
  @Path("messages")
  public Response list(@RestQuery String limit) throws Exception {
    return work.list(limit);
  }

  @POST
  @Path("messages")
  public Response create(String body) throws Exception {
    return work.create(body);
  }

  @GET
  @Path("messages/{id}")
  public Response get(@RestPath String id) throws Exception {
    return work.get(id);
  }

  @PUT
  @Path("messages/{id}")
  public Response update(@RestPath String id, String body) throws Exception {
    return work.update(id, body);
  }

  @DELETE
  @Path("messages/{id}")
  public Response delete(@RestPath String id) throws Exception {
    return work.delete(id);
  }
}
