// Command broken does not compile: the image tests check that Build reports the
// compiler's message.
package main

func main() {
	var unused int
}
