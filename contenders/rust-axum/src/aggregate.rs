//! /aggregate, the fan-out: a tokio `JoinSet` with a task per key. The first call to fail is
//! the answer at once; returning drops the set, which aborts the tasks still running (their
//! requests are dropped and their connections closed), tokio's cancellation by drop. The
//! values are answered in key order.

use crate::contract::{aggregate_keys, param, query};
use crate::{bad, json, text, App, Shared};
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use std::sync::Arc;

/// One downstream call for `key`: its value, or the answer to give when it failed (502, or 504
/// at the client's timeout). /enrich makes the same call.
pub async fn call(app: &App, key: &str) -> Result<String, Response> {
    let failed = |e: reqwest::Error| {
        if e.is_timeout() {
            text(
                StatusCode::GATEWAY_TIMEOUT,
                format!("downstream did not answer within {} ms", app.timeout_ms),
            )
        } else {
            text(StatusCode::BAD_GATEWAY, format!("downstream failed: {e}"))
        }
    };
    let resp = app
        .client
        .get(format!("{}/value?key={key}", app.downstream))
        .send()
        .await
        .map_err(failed)?;
    let status = resp.status();
    let body = resp.text().await.map_err(failed)?;
    if !status.is_success() {
        return Err(text(
            StatusCode::BAD_GATEWAY,
            format!("downstream answered {}", status.as_u16()),
        ));
    }
    Ok(body)
}

pub async fn aggregate(State(app): Shared, uri: Uri) -> Response {
    let q = match query(uri.query()) {
        Ok(q) => q,
        Err(why) => return bad(why),
    };
    let keys = match aggregate_keys(param(&q, "keys")) {
        Ok(k) => k,
        Err(why) => return bad(why),
    };
    let mut calls = tokio::task::JoinSet::new();
    for (i, key) in keys.iter().enumerate() {
        let (app, key): (Arc<App>, String) = (app.clone(), key.to_string());
        calls.spawn(async move { (i, call(&app, &key).await) });
    }
    let mut values = vec![String::new(); keys.len()];
    while let Some(done) = calls.join_next().await {
        match done {
            Ok((i, Ok(value))) => values[i] = value,
            // Returning drops `calls`: every call still running is aborted.
            Ok((_, Err(failed))) => return failed,
            Err(e) => return text(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
        }
    }
    json(StatusCode::OK, &values)
}
