package main

// /messages on PostgreSQL through pgx's connection pool (pgxpool), the Go community's usual
// driver. Each request's goroutine blocks on its query; the runtime parks it, not a thread.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

type message struct {
	ID   int64  `json:"id"`
	Text string `json:"text"`
}

const (
	sqlList   = "SELECT id, text FROM messages ORDER BY id DESC LIMIT $1"
	sqlGet    = "SELECT id, text FROM messages WHERE id = $1"
	sqlCreate = "INSERT INTO messages (text) VALUES ($1) RETURNING id, text"
	sqlUpdate = "UPDATE messages SET text = $1 WHERE id = $2 RETURNING id, text"
	sqlDelete = "DELETE FROM messages WHERE id = $1"
)

// openPool connects lazily: the server starts without a database, as the other contenders do.
func openPool() (*pgxpool.Pool, error) {
	u := url.URL{
		Scheme: "postgres",
		User:   url.UserPassword(envOr("IOBOUND_DB_USER", "iobound"), os.Getenv("IOBOUND_DB_PASSWORD")),
		Host:   envOr("IOBOUND_DB_HOST", "127.0.0.1") + ":" + envOr("IOBOUND_DB_PORT", "5432"),
		Path:   "/" + envOr("IOBOUND_DB_NAME", "iobound"),
	}
	cfg, err := pgxpool.ParseConfig(u.String())
	if err != nil {
		return nil, err
	}
	size, err := strconv.Atoi(envOr("IOBOUND_DB_POOL", "10"))
	if err != nil || size < 1 {
		return nil, fmt.Errorf("IOBOUND_DB_POOL=%q is not a pool size", os.Getenv("IOBOUND_DB_POOL"))
	}
	cfg.MaxConns = int32(size)
	return pgxpool.NewWithConfig(context.Background(), cfg)
}

type messages struct{ pool *pgxpool.Pool }

func (m messages) register(mux *http.ServeMux) {
	mux.HandleFunc("GET /messages", m.list)
	mux.HandleFunc("POST /messages", m.create)
	mux.HandleFunc("GET /messages/{id}", m.get)
	mux.HandleFunc("PUT /messages/{id}", m.update)
	mux.HandleFunc("DELETE /messages/{id}", m.delete)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		text(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func (m messages) list(w http.ResponseWriter, r *http.Request) {
	raw, present := query(r, "limit")
	limit, err := messageLimit(raw, present)
	if err != nil {
		text(w, http.StatusBadRequest, err.Error())
		return
	}
	rows, err := m.pool.Query(r.Context(), sqlList, limit)
	if err != nil {
		text(w, http.StatusInternalServerError, err.Error())
		return
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[message])
	if err != nil {
		text(w, http.StatusInternalServerError, err.Error())
		return
	}
	if list == nil {
		list = []message{}
	}
	writeJSON(w, http.StatusOK, list)
}

// one runs a statement that returns at most one message and answers with it, or 404.
func (m messages) one(w http.ResponseWriter, r *http.Request, status int, sql string, args ...any) {
	var msg message
	err := m.pool.QueryRow(r.Context(), sql, args...).Scan(&msg.ID, &msg.Text)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		text(w, http.StatusNotFound, "no such message")
	case err != nil:
		text(w, http.StatusInternalServerError, err.Error())
	default:
		writeJSON(w, status, msg)
	}
}

// body reads a create/update body: over 64 KiB is 413, otherwise its validated text.
func body(w http.ResponseWriter, r *http.Request) (string, bool) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		text(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes", maxBodyBytes))
		return "", false
	}
	if err != nil {
		text(w, http.StatusBadRequest, err.Error())
		return "", false
	}
	t, err := messageText(raw)
	if err != nil {
		text(w, http.StatusBadRequest, err.Error())
		return "", false
	}
	return t, true
}

func pathID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := messageID(r.PathValue("id"))
	if err != nil {
		text(w, http.StatusBadRequest, err.Error())
		return 0, false
	}
	return id, true
}

func (m messages) create(w http.ResponseWriter, r *http.Request) {
	if t, ok := body(w, r); ok {
		m.one(w, r, http.StatusCreated, sqlCreate, t)
	}
}

func (m messages) get(w http.ResponseWriter, r *http.Request) {
	if id, ok := pathID(w, r); ok {
		m.one(w, r, http.StatusOK, sqlGet, id)
	}
}

func (m messages) update(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	if t, ok := body(w, r); ok {
		m.one(w, r, http.StatusOK, sqlUpdate, t, id)
	}
}

func (m messages) delete(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	tag, err := m.pool.Exec(r.Context(), sqlDelete, id)
	switch {
	case err != nil:
		text(w, http.StatusInternalServerError, err.Error())
	case tag.RowsAffected() == 0:
		text(w, http.StatusNotFound, "no such message")
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}
