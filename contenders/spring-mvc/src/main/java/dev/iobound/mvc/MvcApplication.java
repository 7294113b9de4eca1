package dev.iobound.mvc;

import dev.iobound.common.BadRequest;
import dev.iobound.common.Contract;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** Thread-per-request: each request holds a Tomcat worker thread for its whole life, waits included. */
@SpringBootApplication
@RestController
public class MvcApplication {
    public static void main(String[] args) {
        SpringApplication.run(MvcApplication.class, args);
    }

    @GetMapping(value = "/plaintext", produces = MediaType.TEXT_PLAIN_VALUE)
    public String plaintext() {
        return Contract.PLAINTEXT;
    }

    @GetMapping(value = "/delay", produces = MediaType.TEXT_PLAIN_VALUE)
    public String delay(@RequestParam(name = "ms", required = false) String ms) throws InterruptedException {
        long millis = Contract.delayMs(ms);
        Thread.sleep(millis); // blocks the worker thread: that is the model under test
        return Long.toString(millis);
    }

    @ExceptionHandler(BadRequest.class)
    public ResponseEntity<String> badRequest(BadRequest e) {
        return ResponseEntity.badRequest().contentType(MediaType.TEXT_PLAIN).body(e.getMessage());
    }
}
