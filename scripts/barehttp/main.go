// Command barehttp is the ceiling for HTTP benchmarks: a bare net/http
// handler answering a small JSON body, run on the same machine as holdco.
package main

import (
	"flag"
	"log"
	"net/http"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18090", "listen address")
	flag.Parse()
	body := []byte(`{"status":"ok"}`)
	log.Fatal(http.ListenAndServe(*addr, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})))
}
