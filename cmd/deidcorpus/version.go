package main

import (
	"context"
	"flag"
	"fmt"

	"deidcorpus/version"
)

func init() {
	register(&command{
		name:     "version",
		summary:  "print the version this binary was built from, as provenance records name it (also: --version)",
		examples: []string{"deidcorpus version"},
		setup: func(e *env, fs *flag.FlagSet) action {
			return func(_ context.Context, args []string) error {
				if len(args) > 0 {
					return usageErr("version takes no arguments")
				}
				fmt.Fprintln(e.stdout, version.String())
				return nil
			}
		},
	})
}
