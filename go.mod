module github.com/paddockdev/paddock

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/oklog/ulid/v2 v2.1.2
)

require golang.org/x/sync v0.24.0
