package p

// Later is declared after its method.
type Later string
