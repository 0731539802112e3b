// Command hello is the tiny main package the image tests build: it prints its
// arguments after a fixed greeting.
package main

import (
	"fmt"
	"os"
	"strings"
)

func main() {
	fmt.Println("hello from the image:", strings.Join(os.Args[1:], " "))
}
