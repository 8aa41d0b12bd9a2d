package main

// httpUsage is the help of --http.
const httpUsage = "serve a live page of this role's run at http://`ADDR`/ (e.g. 127.0.0.1:8080; empty: off): configuration, rounds, the ledger's epsilon, accuracy, round times, errors"

// exposeUsage is the help of the shuffler's --expose-dummy-counts.
const exposeUsage = "allow --http and --metrics-listen beyond loopback: both show the dummy reports per round, which only the shuffler's operator may see (a published dummy count breaks privacy; docs/proofs/dummy-reports.md)"
